/* SPDX-License-Identifier: MIT */
/*
 * x86_64: a restarted system call made to fail with EINTR
 * (arch/sigrestart.h). The kernel restarts a call by putting the call's
 * number back in rax and the instruction pointer back on the 2-byte
 * `syscall` instruction; the return from a call is rax = result with the
 * instruction pointer just after it.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "arch/sigrestart.h"

static bool always_restarted(long nr)
{
    return nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone
#ifdef SYS_clone3
           || nr == SYS_clone3
#endif
        ;
}

bool cap__arch_syscall_to_eintr(void *uctx)
{
    greg_t *regs = ((ucontext_t *)uctx)->uc_mcontext.gregs;
    /* Readable: the bytes of the instruction about to run. */
    const unsigned char *ip = (const unsigned char *)(uintptr_t)regs[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0x05)
        return false;
    long nr = (long)regs[REG_RAX];
    if (nr < 0 || always_restarted(nr))
        return false;
    regs[REG_RAX] = -EINTR;
    regs[REG_RIP] += 2;
    return true;
}

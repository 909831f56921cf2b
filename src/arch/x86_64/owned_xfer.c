/* SPDX-License-Identifier: MIT */
/*
 * x86_64: the rewind of an interrupted owned transfer
 * (src/arch/ownedxfer.h, owned_xfer.S).
 */
#include <stdint.h>
#include <ucontext.h>

#include "arch/ownedxfer.h"

extern const char cap__owned_xfer_test[] __attribute__((visibility("hidden")));
extern const char cap__owned_xfer_syscall[] __attribute__((visibility("hidden")));

void cap__arch_owned_xfer_rewind(void *uctx)
{
    greg_t *regs = ((ucontext_t *)uctx)->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)regs[REG_RIP];
    if (ip >= (uintptr_t)cap__owned_xfer_test && ip <= (uintptr_t)cap__owned_xfer_syscall)
        regs[REG_RIP] = (greg_t)(uintptr_t)cap__owned_xfer_test;
}

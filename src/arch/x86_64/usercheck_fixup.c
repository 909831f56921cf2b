/* SPDX-License-Identifier: MIT */
/*
 * x86_64: turning a fault inside the pointer checks (usercheck.S) into
 * their false answer, from the fault handler's ucontext.
 */
#include <stdint.h>
#include <ucontext.h>

#include "arch/usercheck.h"

extern const char cap__usercheck_begin[], cap__usercheck_end[];
extern const char cap__usercheck_fail[];

bool cap__usercheck_fixup(void *uctx)
{
    ucontext_t *uc = uctx;
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    if (ip < (uintptr_t)cap__usercheck_begin || ip >= (uintptr_t)cap__usercheck_end)
        return false;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)cap__usercheck_fail;
    return true;
}

/* SPDX-License-Identifier: MIT */
/* x86-64 reading of a handler's context (arch/sigframe.h). */
#include <stdint.h>
#include <ucontext.h>

#include "arch/sigframe.h"

const void *cap__arch_interrupted_sp(const void *uctx)
{
    const ucontext_t *uc = uctx;
    return (const void *)(uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}

/* SPDX-License-Identifier: MIT */
/*
 * Builds the first frame of a new x86_64 context so that cap__ctx_switch
 * "returns" into cap__ctx_trampoline with entry and arg in r12 and r13.
 */
#include "arch/context.h"

#include <stdint.h>
#include <string.h>

void cap__ctx_trampoline(void);

/* The running context's SSE and x87 control words: a new thread starts
 * with its creator's (POSIX: the floating-point environment is inherited,
 * as a kernel thread inherits its parent's FPU state at clone). */
static void current_fp_words(uint32_t words[2])
{
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    words[0] = mxcsr;
    words[1] = fpucw;
}

void *cap__ctx_make(void *stack_hi, void *(*entry)(void *), void *arg)
{
    /* After the switch pops the frame and `ret`s, rsp = frame + 64 must be
     * 16-byte aligned so the trampoline's call sees the ABI alignment. */
    uintptr_t top = (uintptr_t)stack_hi & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - CAP_CTX_FRAME_BYTES);
    uint32_t fp_words[2];
    current_fp_words(fp_words);

    memcpy(&frame[0], fp_words, sizeof fp_words);
    frame[1] = 0;                        /* r15 */
    frame[2] = 0;                        /* r14 */
    frame[3] = (uint64_t)(uintptr_t)arg; /* r13 */
    frame[4] = (uint64_t)(uintptr_t)entry; /* r12 */
    frame[5] = 0;                        /* rbx */
    frame[6] = 0;                        /* rbp: ends frame-pointer walks */
    frame[7] = (uint64_t)(uintptr_t)cap__ctx_trampoline;
    return frame;
}

/* SPDX-License-Identifier: MIT */
/*
 * Context switch contract. One implementation per architecture lives in
 * src/arch/<cpu>/switch.S; this header picks it with a single #if chain.
 *
 * A context is just a saved stack pointer: cap__ctx_switch pushes the
 * callee-saved registers and the FP control words onto the current stack,
 * stores the stack pointer in *save_sp, loads load_sp and pops the same
 * frame from the other stack. Nothing else is saved: every switch is a
 * function call, so the ABI already lets the compiler assume all
 * caller-saved registers are clobbered.
 *
 * Who calls it: src/sched/switch.h, which adds the stack and sanitizer
 * bookkeeping around it (and src/stack/guard.c for its report context).
 */
#ifndef CAP_ARCH_CONTEXT_H
#define CAP_ARCH_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
/*
 * x86_64 saved frame, from the saved stack pointer upwards (tools/gdb reads
 * this layout; keep them in step):
 *   sp+0   mxcsr (4 bytes), x87 control word (2 bytes), padding (2 bytes)
 *   sp+8   r15
 *   sp+16  r14
 *   sp+24  r13
 *   sp+32  r12
 *   sp+40  rbx
 *   sp+48  rbp
 *   sp+56  return address (where the thread resumes)
 */
#define CAP_CTX_FRAME_BYTES 64

/* Stores the running context's MXCSR at *mxcsr, for cap__ctx_switch_mx. */
static inline void cap__ctx_read_mxcsr(uint32_t *mxcsr)
{
    __asm__ volatile("stmxcsr %0" : "=m"(*mxcsr));
}
#else
#error "Capriccio has a context switch for x86_64 only; add src/arch/<cpu>/switch.S"
#endif

/* Saves the running context into *save_sp and resumes the one at load_sp. */
void cap__ctx_switch(void **save_sp, void *load_sp);

/* The same, with the running context's MXCSR already stored at *mxcsr by
 * cap__ctx_read_mxcsr (see switch.S): nothing between that read and this
 * call may change MXCSR. */
void cap__ctx_switch_mx(void **save_sp, void *load_sp, const uint32_t *mxcsr);
/* The same, for a load_sp from cap__ctx_make that has not run yet (either
 * function works for it; this one keeps the return-address predictor in
 * step, see switch.S). */
void cap__ctx_start(void **save_sp, void *load_sp);

/* Resumes the context at load_sp, abandoning the running one unsaved. */
_Noreturn void cap__ctx_load(void *load_sp);

/*
 * Prepares a fresh context at the top of [stack_lo, stack_hi): the first
 * switch to the returned stack pointer calls entry(arg) on that stack with
 * the ABI's alignment and the caller's FP control words (a new thread
 * inherits its creator's floating-point environment). entry either never
 * returns or returns a saved stack pointer, which is then resumed as by
 * cap__ctx_load: a context that ends that way leaves the return-address
 * predictor as it found it.
 */
void *cap__ctx_make(void *stack_hi, void *(*entry)(void *), void *arg);

#endif /* CAP_ARCH_CONTEXT_H */

/* SPDX-License-Identifier: MIT */
/*
 * The one place a context switch happens, wrapping cap__ctx_switch with
 * the bookkeeping every switch needs:
 *  - AddressSanitizer is told about the stack change (fiber annotations),
 *    or it reports false stack-buffer errors; a context that will never
 *    resume passes fake_save == NULL so ASan drops its fake stack.
 *  - the stack layer sees every switch (cap__stack_switch_hook/back:
 *    canary checks for stacks without a guard page, and the split-stack
 *    limit word saved and restored per context; see src/stack/stack.h).
 * errno is not handled here: the side that *resumes* a thread stores the
 * thread's errno into the kernel thread's slot before switching, so the
 * resumed code never reuses an errno address from before the switch.
 */
#ifndef CAP_SCHED_SWITCH_H
#define CAP_SCHED_SWITCH_H

#include <stdbool.h>
#include <stddef.h>

#include "arch/context.h"
#include "stack/stack.h"
#include "util/asan.h"

#ifdef CAP__ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);

/* Set from before a switch's start annotation until after the finish one
 * (on this kernel thread; defined in worker.c). ASan aborts a switch
 * started while one is open, so a handler that runs in between must not
 * be taken for code of the thread on whose stack it runs (it could exit
 * or jump out of the thread at once): cap__worker_runs_frames_of. */
extern __thread bool cap__asan_switching
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

static inline void cap__asan_switch_begin(void)
{
    cap__asan_switching = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* set before the annotation */
}

static inline void cap__asan_switch_end(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* cleared after the annotation */
    cap__asan_switching = false;
}
#endif

/* fresh: to_sp is a context that has never run (cap__ctx_start).
 * mxcsr: NULL, or where the running context's MXCSR was stored ahead with
 * cap__ctx_read_mxcsr (cap__ctx_switch_mx). */
static inline __attribute__((always_inline)) void
cap__switch_to_mx(void **save_sp, void **fake_save, void *to_sp, const void *to_lo,
                  size_t to_size, bool fresh, const uint32_t *mxcsr)
{
    uintptr_t limit = cap__stack_switch_hook(to_lo);
#ifdef CAP__ASAN
    cap__asan_switch_begin();
    __sanitizer_start_switch_fiber(fake_save, to_lo, to_size);
#else
    (void)fake_save;
    (void)to_size;
#endif
    if (fresh)
        cap__ctx_start(save_sp, to_sp);
    else if (mxcsr != NULL)
        cap__ctx_switch_mx(save_sp, to_sp, mxcsr);
    else
        cap__ctx_switch(save_sp, to_sp);
#ifdef CAP__ASAN
    __sanitizer_finish_switch_fiber(fake_save ? *fake_save : NULL, NULL, NULL);
    cap__asan_switch_end();
#endif
    cap__stack_switch_back(limit);
}

static inline void cap__switch_to(void **save_sp, void **fake_save, void *to_sp,
                                  const void *to_lo, size_t to_size, bool fresh)
{
    cap__switch_to_mx(save_sp, fake_save, to_sp, to_lo, to_size, fresh, NULL);
}

static inline void cap__switch(void **save_sp, void **fake_save, void *to_sp,
                               const void *to_lo, size_t to_size)
{
    cap__switch_to(save_sp, fake_save, to_sp, to_lo, to_size, false);
}

/*
 * The last switch of a context that never resumes (an exiting thread):
 * nothing is saved. Without ASan, a thread's exit can instead return the
 * target from its entry function to the trampoline, which loads it (see
 * cap__ctx_make); cap__switch_final_hook is then all that runs before.
 */
static inline void cap__switch_final_hook(const void *to_lo)
{
    (void)cap__stack_switch_hook(to_lo); /* the leaving limit is not needed */
}

_Noreturn static inline void cap__switch_final(void *to_sp, const void *to_lo, size_t to_size)
{
    cap__switch_final_hook(to_lo);
#ifdef CAP__ASAN
    cap__asan_switch_begin();
    __sanitizer_start_switch_fiber(NULL, to_lo, to_size);
#else
    (void)to_size;
#endif
    cap__ctx_load(to_sp);
}

/* First thing a brand-new context runs. */
static inline void cap__switch_first_entry(void)
{
#ifdef CAP__ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
    cap__asan_switch_end();
#endif
}

#endif /* CAP_SCHED_SWITCH_H */

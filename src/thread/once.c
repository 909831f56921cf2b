/* SPDX-License-Identifier: MIT */
/*
 * cap_once: state 0 = not run, 2 = done, and while init runs: 1 plus the
 * fork generation of its runner shifted by GEN_SHIFT. The first caller to
 * move 0 -> running runs init; the others park on the state word until it
 * is done. Waiters park (cap__wait_on), they never spin a worker.
 *
 * Forks: in a fork's child only the forking thread runs (sched/worker.h),
 * so an init that another thread of the parent was running will never
 * finish there. A caller that finds init running in an older generation
 * takes it over (state to running in its own generation) and runs init
 * itself, as glibc's pthread_once does. (If the forking thread was itself
 * inside that init, its init and the taker's run both in the child: a
 * fork inside a once routine is not covered.)
 *
 * Cancellation: an init cancelled at a cancellation point (or ending its
 * thread with cap_thread_exit) leaves the once as if cap_once had never
 * been called, as POSIX says: a cleanup frame around init puts the state
 * back to not run and wakes the parked callers, one of which runs init.
 * So does an init left by unwinding (an exception; glibc's pthread_exit
 * on a kernel thread that calls glibc's pthread_once, which is this
 * function: intercept/libc_cond.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "capriccio.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"

enum { ONCE_NEW = 0, ONCE_RUNNING = 1, ONCE_DONE = 2, GEN_SHIFT = 2 };

/* The run of init by this caller. */
struct run {
    _Atomic uint32_t *state;
    cap_cleanup_frame_t frame;
    bool settled; /* init returned, or the state was put back */
};

static void abandon(struct run *r)
{
    if (r->settled)
        return;
    r->settled = true;
    atomic_store_explicit(r->state, ONCE_NEW, memory_order_release);
    cap__wake_on(r->state, 0x7fffffff);
}

/* Cleanup handler: init's thread ends inside init (see the top). */
static void init_abandoned(void *arg)
{
    abandon(arg);
}

/* Leaving the frame of cap_once: a no-op once settled; otherwise the
 * stack is unwinding through it (this file is built with -fexceptions):
 * a C++ exception thrown by init, or glibc's pthread_exit or
 * cancellation on a kernel thread the library does not run (glibc's
 * pthread_once puts the state back then too). */
static void unwound(struct run *r)
{
    if (r->settled)
        return;
    cap_cleanup_frame_pop(&r->frame, 0);
    abandon(r);
}

int cap__once_run(cap_once_t *once, void (*init)(void *), void *arg)
{
    _Atomic uint32_t *state = (_Atomic uint32_t *)&once->state;
    if (atomic_load_explicit(state, memory_order_acquire) == ONCE_DONE)
        return 0;
    uint32_t mine = ONCE_RUNNING | cap__fork_gen << GEN_SHIFT;
    uint32_t s = ONCE_NEW;
    for (;;) {
        if (s == ONCE_NEW || (s != ONCE_DONE && s != mine)) {
            /* not run, or its runner is lost in a fork: ours */
            if (!atomic_compare_exchange_strong(state, &s, mine))
                continue;
            struct run r __attribute__((cleanup(unwound))) = { .state = state };
            cap_cleanup_frame_push(&r.frame, init_abandoned, &r);
            init(arg);
            cap_cleanup_frame_pop(&r.frame, 0);
            r.settled = true;
            atomic_store_explicit(state, ONCE_DONE, memory_order_release);
            cap__wake_on(state, 0x7fffffff);
            return 0;
        }
        if (s == ONCE_DONE)
            return 0;
        cap__wait_on(state, s, CAP__FOREVER, CAP__PARK_ONCE);
        s = atomic_load_explicit(state, memory_order_acquire);
    }
}

/* The plain init of cap_once, through cap__once_run's argument. */
struct plain_init {
    void (*fn)(void);
};

static void run_plain(void *arg)
{
    ((struct plain_init *)arg)->fn();
}

int cap_once(cap_once_t *once, void (*init)(void))
{
    if (once == NULL || init == NULL)
        return EINVAL;
    struct plain_init p = { init };
    return cap__once_run(once, run_plain, &p);
}

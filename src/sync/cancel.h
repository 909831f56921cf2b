/* SPDX-License-Identifier: MIT */
/*
 * Deferred cancellation, internal side (the API is include/capriccio/cancel.h,
 * the park protocol is in src/sched/park.h).
 *
 * A cancellation point is built from two pieces:
 *   1. on entry, cap__cancel_point(): acts on a pending request;
 *   2. for the wait, cap__park_cancellable or cap__wait_on_cancellable
 *      (park.h). On ECANCELED the caller unlinks itself from its wait
 *      structure under that structure's lock (cap__wait_on already did),
 *      restores whatever state its cleanup handlers expect (a condition
 *      wait retakes its mutex), then calls cap__cancel_act().
 * The I/O layer makes its blocking calls cancellation points the same way:
 * the wrappers (src/intercept/intercept.h: cap__ic_enter on entry,
 * cap__ic_ret_cancel on the way out) pass a cap__intr with cancel set, the
 * waits in src/io/wait.c park cancellably and unlink their records on
 * ECANCELED, and the wrapper acts once the call holds nothing.
 *
 * Acting never returns: it runs the cleanup handlers and the key
 * destructors and ends the thread with CAP_CANCELED, on the thread's own
 * stack (no unwinding).
 */
#ifndef CAP_SYNC_CANCEL_H
#define CAP_SYNC_CANCEL_H

#include "sched/park.h"
#include "thread/thread.h"

/* If a cancel is pending and the caller can act on it (a user thread with
 * cancellation enabled, not already exiting), acts and does not return;
 * otherwise returns 0. */
int cap__cancel_point(void);

/* Ends the calling thread as cancelled. */
_Noreturn void cap__cancel_act(void);

/* Exit path (thread.c): pops and runs every cleanup handler, innermost
 * first; from here on no cancellation point acts. Inline, so a thread
 * with no handlers (most) makes no call. */
void cap__cleanup_pop_all(cap__thread *self);
static inline void cap__cleanup_run_all(cap__thread *self)
{
    self->cancelling = true;
    if (self->cleanup != NULL)
        cap__cleanup_pop_all(self);
}

/* Exit path, last: puts the [owner] cancellation fields back to zero for
 * the TCB's next thread (see thread.h). Inline: it runs at every exit. */
static inline void cap__cancel_reset(cap__thread *self)
{
    self->cancel_disabled = false;
    self->cancel_async = false;
    self->cancelling = false;
    self->park_cancellable = false;
    self->cleanup = NULL;
}

#endif /* CAP_SYNC_CANCEL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Cancellation: requests, state and type, cleanup handlers.
 *
 * A request is recorded by storing the target's generation into its
 * cancel_gen (thread.h), under the target's TCB lock with the handle's
 * generation checked, so it can only name the life of the slot the caller
 * meant. Then, still under that lock, we try to claim the target's wait
 * token if it is parked at a cancellation point (park.h); if the token
 * says otherwise, the request waits for the next cancellation point, and
 * a park that raced with us re-checks the request from finish_switch.
 *
 * Cleanup frames live on the stacks of the functions that pushed them,
 * linked from the TCB innermost first. A kernel thread the library does
 * not run keeps its list in TLS: it cannot be cancelled, but push/pop and
 * pthread_exit-like use must still work in compat code.
 */
#include "sync/cancel.h"

#include <errno.h>

#include "sched/worker.h"
#include "util/spin.h"

static __thread cap_cleanup_frame_t *foreign_cleanup;

int cap_thread_cancel(cap_thread_t h)
{
    cap__thread *t = cap__thread_lookup(h);
    if (t == NULL)
        return ESRCH;
    cap__spin_lock(&t->lock);
    if (cap__thread_handle(t) != h || atomic_load(&t->state) == CAP__T_FREE) {
        cap__spin_unlock(&t->lock);
        return ESRCH;
    }
    /* seq_cst store, then the claim: the canceller's half of the Dekker
     * pair with finish_switch (park.h). */
    atomic_store(&t->cancel_gen, (uint32_t)(h >> 32));
    if (cap__cancel_claim(t))
        cap__make_runnable(t);
    cap__spin_unlock(&t->lock);
    return 0;
}

int cap__cancel_point(void)
{
    cap__thread *self = cap__current();
    if (self != NULL && cap__cancel_requested(self))
        cap__cancel_act();
    return 0;
}

void cap__cancel_act(void)
{
    cap_thread_exit(CAP_CANCELED);
}

void cap_testcancel(void)
{
    cap__cancel_point();
}

int cap_thread_setcancelstate(int state, int *old)
{
    if (state != CAP_CANCEL_ENABLE && state != CAP_CANCEL_DISABLE)
        return EINVAL;
    cap__thread *self = cap__current();
    if (self == NULL) { /* cannot be cancelled anyway */
        if (old != NULL)
            *old = CAP_CANCEL_ENABLE;
        return 0;
    }
    if (old != NULL)
        *old = self->cancel_disabled ? CAP_CANCEL_DISABLE : CAP_CANCEL_ENABLE;
    self->cancel_disabled = state == CAP_CANCEL_DISABLE;
    if (self->cancel_async)
        cap__cancel_point();
    return 0;
}

int cap_thread_setcanceltype(int type, int *old)
{
    if (type != CAP_CANCEL_DEFERRED && type != CAP_CANCEL_ASYNCHRONOUS)
        return EINVAL;
    cap__thread *self = cap__current();
    if (self == NULL) {
        if (old != NULL)
            *old = CAP_CANCEL_DEFERRED;
        return 0;
    }
    if (old != NULL)
        *old = self->cancel_async ? CAP_CANCEL_ASYNCHRONOUS : CAP_CANCEL_DEFERRED;
    self->cancel_async = type == CAP_CANCEL_ASYNCHRONOUS;
    if (self->cancel_async)
        cap__cancel_point();
    return 0;
}

/* ---- cleanup handlers ------------------------------------------------- */

static cap_cleanup_frame_t **cleanup_head(void)
{
    cap__thread *self = cap__current();
    return self != NULL ? &self->cleanup : &foreign_cleanup;
}

void cap_cleanup_frame_push(cap_cleanup_frame_t *frame, void (*routine)(void *), void *arg)
{
    cap_cleanup_frame_t **head = cleanup_head();
    frame->routine = routine;
    frame->arg = arg;
    frame->prev = *head;
    *head = frame;
}

void cap_cleanup_frame_pop(cap_cleanup_frame_t *frame, int execute)
{
    *cleanup_head() = frame->prev;
    if (execute)
        frame->routine(frame->arg);
}

void cap__cleanup_pop_all(cap__thread *self)
{
    while (self->cleanup != NULL) {
        cap_cleanup_frame_t *f = self->cleanup;
        self->cleanup = f->prev; /* popped first: a handler may exit again */
        f->routine(f->arg);
    }
}

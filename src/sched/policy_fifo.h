/* SPDX-License-Identifier: MIT */
/*
 * The fifo policy's two operations, inline so the worker can call them
 * without going through the policy table (worker.c, policy_enqueue): they
 * sit on every yield and park. The queue is the worker's `local`.
 */
#ifndef CAP_SCHED_POLICY_FIFO_H
#define CAP_SCHED_POLICY_FIFO_H

#include "sched/worker.h"

static inline void cap__fifo_enqueue(cap__worker *w, struct cap__thread *t)
{
    cap__tqueue_push(&w->local, t);
}

/* A thread woken by a running thread of the same worker runs next (it goes to
 * the front): the data the waker just produced for it is still in this
 * CPU's cache, as with Go's runnext slot. Every WAKE_FRONT_MAX-th such
 * wake goes to the back instead, so two threads waking each other in
 * turn cannot starve the rest of the queue. */
enum { WAKE_FRONT_MAX = 16 };

static inline void cap__fifo_wake(cap__worker *w, struct cap__thread *t)
{
    if (++w->fifo_wake_streak < WAKE_FRONT_MAX) {
        cap__tqueue_push_front(&w->local, t);
    } else {
        w->fifo_wake_streak = 0;
        cap__tqueue_push(&w->local, t);
    }
}

static inline struct cap__thread *cap__fifo_pick_next(cap__worker *w)
{
    return cap__tqueue_pop(&w->local);
}

#endif /* CAP_SCHED_POLICY_FIFO_H */

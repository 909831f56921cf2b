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

static inline struct cap__thread *cap__fifo_pick_next(cap__worker *w)
{
    return cap__tqueue_pop(&w->local);
}

#endif /* CAP_SCHED_POLICY_FIFO_H */

/* SPDX-License-Identifier: MIT */
/*
 * The default policy: first in, first out on each worker's local queue.
 * O(1) everything; no per-worker state beyond the queue in cap__worker.
 */
#include "sched/policy_fifo.h"

#include "sched/policy.h"

static void fifo_enqueue(cap__worker *w, struct cap__thread *t)
{
    cap__fifo_enqueue(w, t);
}

static struct cap__thread *fifo_pick_next(cap__worker *w)
{
    return cap__fifo_pick_next(w);
}

const cap__policy cap__policy_fifo = {
    .name = "fifo",
    .init = NULL,
    .enqueue = fifo_enqueue,
    .pick_next = fifo_pick_next,
    .on_park = NULL,
    .on_wake = NULL,
};

const cap__policy *cap__policy_active = &cap__policy_fifo;

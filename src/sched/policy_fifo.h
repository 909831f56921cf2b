/* SPDX-License-Identifier: MIT */
/*
 * The fifo policy's operations, inline so the worker can call them without
 * going through the policy table (worker.c, policy_enqueue): they sit on
 * every yield and park. The queue is the worker's `local`, in two parts:
 *
 *  - the front: threads woken by a running thread of this worker (or, from
 *    a synchronisation object, of another worker), last woken first. The
 *    data the waker just produced for them is still in this CPU's cache, as
 *    with Go's runnext slot. Every WAKE_FRONT_MAX-th such wake-up goes to
 *    the back instead, so two threads waking each other in turn cannot keep
 *    the rest of the front waiting for good;
 *  - the back: every other thread (timer and I/O wake-ups, yielders, new
 *    threads), first in first out, each stamped with the worker's tick
 *    count (w->ticks, which advances at least once per switch) when queued.
 *
 * The front is the first w->fifo_front threads of `local`, ending at
 * w->fifo_front_end; the back is the rest. A pick takes the front's first
 * thread unless the back's has waited more than FIFO_WAIT_MAX ticks and
 * the last BACK_RUN_MAX picks made with a front were not all such overdue
 * back threads: while the back is overdue, it gets BACK_RUN_MAX picks,
 * then the front one. So a thread queued at the back with k threads of
 * the back ahead of it runs within FIFO_WAIT_MAX + (k + 1)(1 + 1 /
 * BACK_RUN_MAX) + 1 picks, however many threads running threads wake,
 * and the front's first thread within BACK_RUN_MAX + 1 picks whatever
 * the back holds. Before, with one list, 15 of every 16 wake-ups
 * went ahead of the whole back, so a timer's or I/O's wake-up waited
 * about 16 picks per thread ahead of it (main sleeping 20 ms beside 65,536
 * producer-consumer threads on two workers: back after 0.7-3.4 s). And
 * without the turns, a back longer than FIFO_WAIT_MAX whose threads keep
 * coming back (yielders; thousands of I/O-woken threads in Knot at 10,000
 * connections) is overdue at every pick, and the front waited until it
 * ran dry: for ever beside 200 yielders
 * (tests/sched/front_wake_not_starved_by_back.c); in Knot, most likely
 * the 0.8 s that waiters of its cache lock, handed on through the front,
 * were seen to wait (session 11; not reproduced since).
 */
#ifndef CAP_SCHED_POLICY_FIFO_H
#define CAP_SCHED_POLICY_FIFO_H

#include "sched/worker.h"

enum {
    WAKE_FRONT_MAX = 16, /* one wake-up in this many goes to the back */
    /* Ticks the back's first thread may wait behind the front. Above the
     * 32 yielders of cross_worker_wake_runs_next with room: a round of
     * yielders shorter than this still lets a woken thread run next. */
    FIFO_WAIT_MAX = 64,
    /* Overdue back threads picked in a row before the front's first gets
     * a pick. 1 (strict turns) made producer-consumer at 65,536 threads on
     * two workers ~20% slower (cold back threads between hot front ones);
     * 16 leaves a front thread a few picks from running, not a round. */
    BACK_RUN_MAX = 16,
};

static inline void cap__fifo_enqueue(cap__worker *w, struct cap__thread *t)
{
    t->queued_at = w->ticks;
    cap__tqueue_push(&w->local, t);
}

static inline void cap__fifo_wake(cap__worker *w, struct cap__thread *t)
{
    if (++w->fifo_wake_streak < WAKE_FRONT_MAX) {
        cap__tqueue_push_front(&w->local, t);
        if (w->fifo_front++ == 0)
            w->fifo_front_end = t;
    } else {
        w->fifo_wake_streak = 0;
        cap__fifo_enqueue(w, t);
    }
}

/* With a front: the back's first thread, taken out of the queue, if it has
 * waited its turn and the front's first has not waited BACK_RUN_MAX such
 * picks; else NULL (the front's turn). */
static inline struct cap__thread *cap__fifo_overdue_back(cap__worker *w)
{
    if (w->fifo_back_run >= BACK_RUN_MAX) {
        w->fifo_back_run = 0;
        return NULL;
    }
    struct cap__thread *end = w->fifo_front_end;
    struct cap__thread *t = end->run_next;
    if (t == NULL || (uint32_t)(w->ticks - t->queued_at) <= FIFO_WAIT_MAX) {
        w->fifo_back_run = 0;
        return NULL;
    }
    w->fifo_back_run++;
    end->run_next = t->run_next;
    if (w->local.tail == t)
        w->local.tail = end;
    w->local.len--;
    t->run_next = NULL;
    return t;
}

/* The front's first thread is about to be taken. */
static inline void cap__fifo_front_taken(cap__worker *w)
{
    if (--w->fifo_front == 0)
        w->fifo_front_end = NULL;
}

static inline struct cap__thread *cap__fifo_pick_next(cap__worker *w)
{
    if (w->fifo_front != 0) {
        struct cap__thread *t = cap__fifo_overdue_back(w);
        if (t != NULL)
            return t;
        cap__fifo_front_taken(w);
    }
    return cap__tqueue_pop(&w->local);
}

/* A yield of self: the next thread, self queued at the back; NULL (self
 * not queued) if nothing else is queued. */
static inline struct cap__thread *cap__fifo_yield(cap__worker *w, struct cap__thread *self)
{
    self->queued_at = w->ticks;
    if (w->fifo_front != 0) {
        struct cap__thread *t = cap__fifo_overdue_back(w);
        if (t != NULL) {
            cap__tqueue_push(&w->local, self);
            return t;
        }
        cap__fifo_front_taken(w);
    }
    return cap__tqueue_rotate(&w->local, self); /* pop the head, queue self */
}

#endif /* CAP_SCHED_POLICY_FIFO_H */

/* SPDX-License-Identifier: MIT */
/*
 * Per-worker timers: a binary min-heap of deadlines, O(log n) insert and
 * cancel, O(1) peek, plus a few FIFO lanes for the common case of many
 * waits of one duration. A timer belongs to one parked thread (each
 * thread embeds one), which is all sleeps and timed waits need.
 *
 * Lanes: a socket timeout (SO_RCVTIMEO, SO_SNDTIMEO) gives every parked
 * read of a server the same duration, so its deadlines arrive in arming
 * order. A timer whose deadline is no earlier than the last one of some
 * lane joins the end of the lane with the latest such last deadline (an
 * empty lane if none), else the heap: each lane stays sorted, arm and
 * cancel are O(1) (a doubly linked list through the timers), and with
 * two or three durations in use each settles in a lane of its own.
 * Expiry merges the lane heads and the heap top in deadline order;
 * deadlines are kept exactly (no rounding to a wheel's slots).
 *
 * Each timer set has a spinlock. Under the default placement a thread
 * only arms and cancels timers on its own worker, so the lock is
 * uncontended; it exists for full migration, where a thread may cancel
 * from another worker, and an idle worker expires the timers of the
 * others (worker.c, "Timers").
 */
#ifndef CAP_SCHED_TIMER_H
#define CAP_SCHED_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/spin.h"

struct cap__thread;
struct cap__timer_heap;

typedef struct cap__timer {
    uint64_t deadline;
    uint32_t index;                /* position in heap->items, or CAP__TIMER_LANE | lane */
    struct cap__timer_heap *heap;  /* NULL when not armed */
    struct cap__timer *prev, *next; /* in a lane */
} cap__timer;

enum { CAP__TIMER_LANES = 4 };
#define CAP__TIMER_LANE 0x80000000u

typedef struct cap__timer_lane {
    cap__timer *head, *tail; /* deadlines non-decreasing from head */
} cap__timer_lane;

typedef struct cap__timer_slot {
    uint64_t deadline; /* a copy of timer->deadline, read by the sifts */
    cap__timer *timer;
} cap__timer_slot;

typedef struct cap__timer_heap {
    cap__spin lock;
    uint32_t len;           /* armed timers, heap and lanes (racy peeks read it) */
    uint32_t hlen, cap;     /* the heap's length and room */
    cap__timer_slot *items;
    cap__timer_lane lanes[CAP__TIMER_LANES];
} cap__timer_heap;

/* Grows h's heap to hold at least n timers; 0 or -ENOMEM. */
int cap__timer_reserve(cap__timer_heap *h, uint32_t n);
/* 0, or -ENOMEM when the heap is full and cannot grow (never, once room
 * for every live thread is reserved: park.h). */
int cap__timer_arm(cap__timer_heap *h, cap__timer *t, uint64_t deadline);
/* Disarms t if it is still armed (the check is repeated under the lock). */
void cap__timer_disarm(cap__timer *t);
/* No-op if t is not armed; the check is inline, every park ends here. */
static inline void cap__timer_cancel(cap__timer *t)
{
    if (t->heap != NULL)
        cap__timer_disarm(t);
}
/* In a fork's child, for the forking worker's heap: every armed timer is a
 * lost thread's (the forking thread runs, so has none armed), and under
 * CAP_MIGRATE another worker's kernel thread, which the child lacks, may
 * have held the lock or been midway through a cancel: empties h (its room
 * stays) and frees the lock. */
void cap__timer_forked(cap__timer_heap *h);
/* Earliest armed deadline, or CAP__FOREVER. */
uint64_t cap__timer_next(cap__timer_heap *h);
/* Disarms every timer with deadline <= now and calls fire(timer) for each,
 * under the heap lock (fire must not arm or cancel timers on h). Returns
 * how many fired; next, if not NULL, gets the earliest deadline left
 * (CAP__FOREVER: none), read under the same lock. ready, if not NULL, is
 * asked first about each timer (under the lock): at the first it says
 * false for, expiry stops and leaves that timer and the later ones armed
 * (another worker's expiry, which may meet a timer whose thread has not
 * finished parking: worker.c, "Timers"). */
unsigned cap__timer_expire(cap__timer_heap *h, uint64_t now, void (*fire)(cap__timer *t),
                           bool (*ready)(const cap__timer *t), uint64_t *next);

#endif /* CAP_SCHED_TIMER_H */

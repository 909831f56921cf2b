/* SPDX-License-Identifier: MIT */
/*
 * Binary min-heap of timers keyed by deadline; see timer.h. The array
 * holds each deadline beside its timer, so the sifts compare without
 * touching the timers (each in its own thread's TCB: a cache miss apiece
 * with thousands armed). Each timer records its index so cancel is
 * O(log n) without a search. The array
 * grows by doubling and never shrinks below its high-water mark.
 */
#include "sched/timer.h"

#include <errno.h>
#include <stdlib.h>

#include "util/clock.h"

static void place(cap__timer_heap *h, uint32_t i, cap__timer_slot slot)
{
    h->items[i] = slot;
    slot.timer->index = i;
}

static void sift_up(cap__timer_heap *h, uint32_t i)
{
    cap__timer_slot s = h->items[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (h->items[parent].deadline <= s.deadline)
            break;
        place(h, i, h->items[parent]);
        i = parent;
    }
    place(h, i, s);
}

static void sift_down(cap__timer_heap *h, uint32_t i)
{
    cap__timer_slot s = h->items[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= h->len)
            break;
        if (child + 1 < h->len && h->items[child + 1].deadline < h->items[child].deadline)
            child++;
        if (s.deadline <= h->items[child].deadline)
            break;
        place(h, i, h->items[child]);
        i = child;
    }
    place(h, i, s);
}

/* Removes items[i]; caller holds the lock. */
static void remove_at(cap__timer_heap *h, uint32_t i)
{
    h->items[i].timer->heap = NULL;
    h->len--;
    if (i == h->len)
        return;
    cap__timer_slot moved = h->items[h->len];
    place(h, i, moved);
    sift_down(h, i);
    sift_up(h, moved.timer->index);
}

/* Caller holds the lock. */
static int grow(cap__timer_heap *h, uint32_t ncap)
{
    cap__timer_slot *items = realloc(h->items, ncap * sizeof *items);
    if (items == NULL)
        return -ENOMEM;
    h->items = items;
    h->cap = ncap;
    return 0;
}

int cap__timer_reserve(cap__timer_heap *h, uint32_t n)
{
    int rc = 0;
    cap__spin_lock(&h->lock);
    if (h->cap < n)
        rc = grow(h, n);
    cap__spin_unlock(&h->lock);
    return rc;
}

int cap__timer_arm(cap__timer_heap *h, cap__timer *t, uint64_t deadline)
{
    cap__spin_lock(&h->lock);
    if (h->len == h->cap && grow(h, h->cap ? h->cap * 2 : 64) != 0) {
        cap__spin_unlock(&h->lock);
        return -ENOMEM;
    }
    t->deadline = deadline;
    t->heap = h;
    place(h, h->len, (cap__timer_slot){ deadline, t });
    h->len++;
    sift_up(h, h->len - 1);
    cap__spin_unlock(&h->lock);
    return 0;
}

void cap__timer_disarm(cap__timer *t)
{
    cap__timer_heap *h = t->heap;
    if (h == NULL)
        return;
    cap__spin_lock(&h->lock);
    /* Re-check under the lock: expiry may have disarmed it meanwhile. */
    if (t->heap == h)
        remove_at(h, t->index);
    cap__spin_unlock(&h->lock);
}

uint64_t cap__timer_next(cap__timer_heap *h)
{
    /* A racy peek at len is fine: only the owner arms on this heap in the
     * default mode, and a stale answer only delays a check by one round. */
    if (__atomic_load_n(&h->len, __ATOMIC_RELAXED) == 0)
        return CAP__FOREVER;
    cap__spin_lock(&h->lock);
    uint64_t d = h->len ? h->items[0].deadline : CAP__FOREVER;
    cap__spin_unlock(&h->lock);
    return d;
}

unsigned cap__timer_expire(cap__timer_heap *h, uint64_t now, void (*fire)(cap__timer *t))
{
    unsigned n = 0;
    /* fire runs under the heap lock: a thread that resumes and cancels its
     * timer then waits until any in-flight fire is over, so a late fire can
     * never touch the thread's next park. */
    cap__spin_lock(&h->lock);
    while (h->len > 0 && h->items[0].deadline <= now) {
        cap__timer *t = h->items[0].timer;
        remove_at(h, 0);
        fire(t);
        n++;
    }
    cap__spin_unlock(&h->lock);
    return n;
}

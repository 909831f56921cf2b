/* SPDX-License-Identifier: MIT */
/*
 * Binary min-heap of timers keyed by deadline, and the FIFO lanes beside
 * it; see timer.h. The array
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
        if (child >= h->hlen)
            break;
        if (child + 1 < h->hlen && h->items[child + 1].deadline < h->items[child].deadline)
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
    h->hlen--;
    if (i == h->hlen)
        return;
    cap__timer_slot moved = h->items[h->hlen];
    place(h, i, moved);
    sift_down(h, i);
    sift_up(h, moved.timer->index);
}

/* Unlinks t from its lane; caller holds the lock. */
static void lane_remove(cap__timer_heap *h, cap__timer *t)
{
    cap__timer_lane *l = &h->lanes[t->index & ~CAP__TIMER_LANE];
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        l->head = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    else
        l->tail = t->prev;
    t->heap = NULL;
    h->len--;
}

static void remove_timer(cap__timer_heap *h, cap__timer *t)
{
    if (t->index & CAP__TIMER_LANE)
        lane_remove(h, t);
    else
        remove_at(h, t->index);
}

/* The lane t may join at its end (timer.h), or NULL. */
static cap__timer_lane *lane_for(cap__timer_heap *h, uint64_t deadline)
{
    cap__timer_lane *best = NULL, *empty = NULL;
    for (int i = 0; i < CAP__TIMER_LANES; i++) {
        cap__timer_lane *l = &h->lanes[i];
        if (l->tail == NULL) {
            if (empty == NULL)
                empty = l;
        } else if (l->tail->deadline <= deadline &&
                   (best == NULL || l->tail->deadline > best->tail->deadline)) {
            best = l;
        }
    }
    return best != NULL ? best : empty;
}

/* The earliest armed timer, or NULL; caller holds the lock. */
static cap__timer *earliest(cap__timer_heap *h)
{
    cap__timer *t = h->hlen ? h->items[0].timer : NULL;
    uint64_t d = h->hlen ? h->items[0].deadline : CAP__FOREVER;
    for (int i = 0; i < CAP__TIMER_LANES; i++) {
        cap__timer *c = h->lanes[i].head;
        if (c != NULL && (t == NULL || c->deadline < d)) {
            t = c;
            d = c->deadline;
        }
    }
    return t;
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
    t->deadline = deadline;
    cap__timer_lane *l = lane_for(h, deadline);
    if (l != NULL) {
        t->index = CAP__TIMER_LANE | (uint32_t)(l - h->lanes);
        t->next = NULL;
        t->prev = l->tail;
        if (l->tail != NULL)
            l->tail->next = t;
        else
            l->head = t;
        l->tail = t;
    } else {
        if (h->hlen == h->cap && grow(h, h->cap ? h->cap * 2 : 64) != 0) {
            cap__spin_unlock(&h->lock);
            return -ENOMEM;
        }
        place(h, h->hlen, (cap__timer_slot){ deadline, t });
        h->hlen++;
        sift_up(h, h->hlen - 1);
    }
    t->heap = h;
    h->len++;
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
        remove_timer(h, t);
    cap__spin_unlock(&h->lock);
}

void cap__timer_forked(cap__timer_heap *h)
{
    h->lock = (cap__spin)CAP__SPIN_INIT;
    h->hlen = 0;
    h->len = 0;
    for (int i = 0; i < CAP__TIMER_LANES; i++)
        h->lanes[i] = (cap__timer_lane){ NULL, NULL };
}

uint64_t cap__timer_next(cap__timer_heap *h)
{
    /* A racy peek at len is fine: only the owner arms on this heap in the
     * default mode, and a stale answer only delays a check by one round. */
    if (__atomic_load_n(&h->len, __ATOMIC_RELAXED) == 0)
        return CAP__FOREVER;
    cap__spin_lock(&h->lock);
    cap__timer *t = earliest(h);
    uint64_t d = t != NULL ? t->deadline : CAP__FOREVER;
    cap__spin_unlock(&h->lock);
    return d;
}

unsigned cap__timer_expire(cap__timer_heap *h, uint64_t now, void (*fire)(cap__timer *t),
                           bool (*ready)(const cap__timer *t), uint64_t *next)
{
    unsigned n = 0;
    /* fire runs under the heap lock: a thread that resumes and cancels its
     * timer then waits until any in-flight fire is over, so a late fire can
     * never touch the thread's next park. */
    cap__spin_lock(&h->lock);
    cap__timer *t;
    while ((t = earliest(h)) != NULL && t->deadline <= now && (ready == NULL || ready(t))) {
        remove_timer(h, t);
        /* Out of the heap, but still armed to a canceller until fire is
         * over: cap__timer_cancel skips the lock when t->heap is NULL, so
         * a thread that another waker resumed on another worker (full
         * migration) could pass its cancel and park again before this
         * fire ran, which would then end that next park. */
        t->heap = h;
        fire(t);
        t->heap = NULL;
        n++;
    }
    if (next != NULL)
        *next = t != NULL ? t->deadline : CAP__FOREVER;
    cap__spin_unlock(&h->lock);
    return n;
}

/* SPDX-License-Identifier: MIT */
/*
 * The handle table: every TCB ever allocated, in chunks of CHUNK_TCBS that
 * are never freed, so a lookup through any handle, however stale, reads
 * valid memory. Free slots form a LIFO list (the most recently used TCB is
 * the warmest) under one spinlock. See thread.h for the handle format.
 */
#include <stdlib.h>

#include "thread/thread.h"

enum {
    CHUNK_SHIFT = 10,
    CHUNK_TCBS = 1 << CHUNK_SHIFT,
    MAX_CHUNKS = 1 << 16, /* 64 Mi threads at once */
};

static _Atomic(cap__thread *) chunks[MAX_CHUNKS];
static atomic_uint nchunks;
static cap__spin table_lock = CAP__SPIN_INIT;
static cap__thread *free_list; /* linked by run_next */

cap__thread *cap__thread_lookup(cap_thread_t h)
{
    uint32_t slot_plus_one = (uint32_t)h;
    uint32_t gen = (uint32_t)(h >> 32);
    if (slot_plus_one == 0)
        return NULL;
    uint32_t slot = slot_plus_one - 1;
    if ((slot >> CHUNK_SHIFT) >= atomic_load_explicit(&nchunks, memory_order_acquire))
        return NULL;
    cap__thread *chunk = atomic_load_explicit(&chunks[slot >> CHUNK_SHIFT], memory_order_acquire);
    cap__thread *t = &chunk[slot & (CHUNK_TCBS - 1)];
    if (atomic_load(&t->gen) != gen || atomic_load(&t->state) == CAP__T_FREE)
        return NULL;
    return t;
}

static bool grow(void)
{
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_relaxed);
    if (n == MAX_CHUNKS)
        return false;
    cap__thread *chunk = calloc(CHUNK_TCBS, sizeof *chunk);
    if (chunk == NULL)
        return false;
    for (uint32_t i = CHUNK_TCBS; i-- > 0;) {
        cap__thread *t = &chunk[i];
        t->slot = (n << CHUNK_SHIFT) | i;
        atomic_init(&t->gen, 1);
        t->run_next = free_list;
        free_list = t;
    }
    atomic_store_explicit(&chunks[n], chunk, memory_order_release);
    atomic_store_explicit(&nchunks, n + 1, memory_order_release);
    return true;
}

cap__thread *cap__thread_alloc(void)
{
    cap__spin_lock(&table_lock);
    if (free_list == NULL && !grow()) {
        cap__spin_unlock(&table_lock);
        return NULL;
    }
    cap__thread *t = free_list;
    free_list = t->run_next;
    cap__spin_unlock(&table_lock);
    t->run_next = NULL;
    return t;
}

void cap__thread_release(cap__thread *t)
{
    /* Bump the generation first: from here on every handle to this slot
     * looks stale, even before the slot is reused. */
    atomic_fetch_add(&t->gen, 1);
    atomic_store(&t->state, CAP__T_FREE);
    cap__spin_lock(&table_lock);
    t->run_next = free_list;
    free_list = t;
    cap__spin_unlock(&table_lock);
}

void cap__thread_foreach(void (*fn)(cap__thread *t, void *arg), void *arg)
{
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
    for (uint32_t c = 0; c < n; c++) {
        cap__thread *chunk = atomic_load_explicit(&chunks[c], memory_order_acquire);
        for (uint32_t i = 0; i < CHUNK_TCBS; i++)
            if (atomic_load(&chunk[i].state) != CAP__T_FREE)
                fn(&chunk[i], arg);
    }
}

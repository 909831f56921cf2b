/* SPDX-License-Identifier: MIT */
/*
 * The handle table: every TCB ever allocated, in chunks of CHUNK_TCBS that
 * are never freed, so a lookup through any handle, however stale, reads
 * valid memory. Released slots form a LIFO list (the most recently used
 * TCB is the warmest) under one spinlock; when it is empty, the newest
 * chunk's next never-used slot is taken (`fresh`), so a chunk's pages are
 * touched only as its slots come into use: a process with a few threads
 * does not fault in the whole first chunk (384 KiB, ~95 page faults at
 * every start-up, a fifth of the runtime's start-up time). A slot never
 * used is zero: state CAP__T_FREE, gen 0, which no handle carries. In
 * front of the list, each worker keeps a few finished TCBs with their
 * stacks still attached (no lock: only that worker's kernel thread
 * touches its cache). See thread.h for the handle format.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "sched/worker.h"
#include "thread/thread.h"
#include "util/asan.h"

enum {
    CHUNK_SHIFT = 10,
    CHUNK_TCBS = 1 << CHUNK_SHIFT,
    MAX_CHUNKS = 1 << 16, /* 64 Mi threads at once */
    /* TCBs (with stacks) a worker keeps for its next creates: enough for
     * bursts of short-lived threads; the rest go back to the shared pools,
     * so exited threads never pin much memory in one worker. */
    TCB_CACHE_MAX = 32,
};

static _Atomic(cap__thread *) chunks[MAX_CHUNKS];
static atomic_uint nchunks;
static cap__spin table_lock = CAP__SPIN_INIT;
static cap__thread *free_list; /* linked by run_next */
static uint32_t fresh = CHUNK_TCBS; /* [table_lock] slots of the newest chunk ever used */

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
    /* Fresh anonymous pages, zero and untouched until a slot is used
     * (calloc may hand out heap memory that it clears, touching all). */
    cap__thread *chunk = mmap(NULL, CHUNK_TCBS * sizeof *chunk, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (chunk == MAP_FAILED)
        return false;
    cap__asan_root(chunk, CHUNK_TCBS * sizeof *chunk);
    atomic_store_explicit(&chunks[n], chunk, memory_order_release);
    atomic_store_explicit(&nchunks, n + 1, memory_order_release);
    fresh = 0;
    return true;
}

/* The newest chunk's next never-used slot, its lock held. */
static cap__thread *take_fresh_locked(void)
{
    if (fresh == CHUNK_TCBS && !grow())
        return NULL;
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_relaxed) - 1;
    cap__thread *t = &atomic_load_explicit(&chunks[n], memory_order_relaxed)[fresh];
    t->slot = (n << CHUNK_SHIFT) | fresh;
    atomic_store_explicit(&t->gen, 1, memory_order_release);
    fresh++;
    return t;
}

cap__thread *cap__thread_alloc(void)
{
    cap__spin_lock(&table_lock);
    cap__thread *t = free_list;
    if (t != NULL)
        free_list = t->run_next;
    else
        t = take_fresh_locked();
    cap__spin_unlock(&table_lock);
    if (t != NULL)
        t->run_next = NULL;
    return t;
}

/* Bump the generation first: from here on every handle to this slot
 * looks stale, even before the slot is reused. The releaser is the only
 * writer of gen and state here, so plain release stores do. */
static void invalidate(cap__thread *t)
{
    uint32_t gen = atomic_load_explicit(&t->gen, memory_order_relaxed);
    atomic_store_explicit(&t->gen, gen + 1, memory_order_release);
    atomic_store_explicit(&t->state, CAP__T_FREE, memory_order_release);
}

void cap__thread_release(cap__thread *t)
{
    invalidate(t);
    cap__spin_lock(&table_lock);
    t->run_next = free_list;
    free_list = t;
    cap__spin_unlock(&table_lock);
}

cap__thread *cap__thread_take_cached(size_t size)
{
    cap__worker *w = cap__worker_self();
    if (w == NULL || w->tcb_cache == NULL || w->tcb_cache->stack_request != size)
        return NULL;
    cap__thread *t = w->tcb_cache;
    w->tcb_cache = t->run_next;
    w->tcb_cached--;
    t->run_next = NULL;
    return t;
}

bool cap__thread_release_keep(cap__thread *t)
{
    cap__worker *w = cap__worker_self();
    if (w == NULL || w->tcb_cached >= TCB_CACHE_MAX || !cap__stack_keep(&t->stack))
        return false;
    invalidate(t);
    t->run_next = w->tcb_cache;
    w->tcb_cache = t;
    w->tcb_cached++;
    return true;
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

void cap__thread_table_forked(void)
{
    table_lock = (cap__spin)CAP__SPIN_INIT;
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
    for (uint32_t c = 0; c < n; c++) {
        cap__thread *chunk = atomic_load_explicit(&chunks[c], memory_order_acquire);
        for (uint32_t i = 0; i < CHUNK_TCBS; i++)
            if (atomic_load_explicit(&chunk[i].lock.held, memory_order_relaxed) != 0)
                chunk[i].lock = (cap__spin)CAP__SPIN_INIT;
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * Pipes the runtime made (see pipe.h): the link between their two ends,
 * the wake-up a transfer on one end gives the other, and the fall back
 * from private to armed.
 */
#include "io/pipe.h"

#include "io/io.h"
#include "io/wait.h"
#include "util/sigctx.h"

void cap__pipe_made(int rfd, int wfd, bool private_)
{
    cap__fd *r = cap__fd_peek(rfd), *w = cap__fd_peek(wfd);
    if (r == NULL || w == NULL)
        return;
    atomic_store_explicit(&w->peer_gen, atomic_load(&r->gen), memory_order_relaxed);
    atomic_store_explicit(&w->peer, (uint32_t)rfd + 1, memory_order_relaxed);
    atomic_store_explicit(&r->peer_gen, atomic_load(&w->gen), memory_order_relaxed);
    atomic_store_explicit(&r->peer, (uint32_t)wfd + 1, memory_order_relaxed);
    uint32_t fl = CAP__FDF_PIPE | (private_ ? CAP__FDF_LOCAL : 0);
    atomic_fetch_or(&r->flags, fl);
    atomic_fetch_or(&w->flags, fl);
}

/* The other end of f if it is still the life f was made with, else NULL;
 * *gen: that life. */
static cap__fd *peer_of(cap__fd *f, uint32_t *gen)
{
    uint32_t p = atomic_load_explicit(&f->peer, memory_order_relaxed);
    if (p == 0)
        return NULL;
    cap__fd *o = cap__fd_peek((int)(p - 1));
    *gen = atomic_load_explicit(&f->peer_gen, memory_order_relaxed);
    if (o == NULL || atomic_load_explicit(&o->gen, memory_order_relaxed) != *gen)
        return NULL;
    return o;
}

static bool has_waiters(cap__fd *o, int d)
{
    return __atomic_load_n(&o->head[d], __ATOMIC_SEQ_CST) != NULL ||
           __atomic_load_n(&o->obs[d], __ATOMIC_SEQ_CST) != NULL;
}

/* The private protocol's wake-up of o's waiters in direction d (pipe.h). */
static void wake_private(cap__fd *o, uint32_t gen, int d)
{
    if (!(atomic_load_explicit(&o->flags, memory_order_relaxed) & CAP__FDF_WAITED)) {
        /* Orders our transfer before the look at the flag (Dekker with
         * the parker's flag-then-attempt). */
        atomic_thread_fence(memory_order_seq_cst);
        if (!(atomic_load_explicit(&o->flags, memory_order_relaxed) & CAP__FDF_WAITED))
            return;
    }
    atomic_fetch_add(&o->seq[d], 1); /* a locked add: a full fence before the look */
    if (!has_waiters(o, d))
        return;
    cap__spin_lock(&o->lock);
    if (atomic_load(&o->gen) == gen)
        cap__io_wake_dir_locked(o, d, 0, false);
    cap__spin_unlock(&o->lock);
}

void cap__pipe_poke_slow(cap__fd *f, bool write)
{
    uint32_t gen;
    cap__fd *o = peer_of(f, &gen);
    if (o == NULL)
        return;
    int d = write ? CAP__IO_READ : CAP__IO_WRITE;
    if (cap__fd_has(f, CAP__FDF_LOCAL)) {
        wake_private(o, gen, d);
        return;
    }
    /* A pipe in the backend: the backend's event for the write still
     * comes and wakes a waiter this misses (a waiter linked after these
     * unlocked looks was linked after our write too); waking the reader
     * now saves it the wait for the next harvest. */
    if (write && has_waiters(o, d))
        cap__io_ready((int)(atomic_load_explicit(&f->peer, memory_order_relaxed) - 1), gen,
                      CAP__IO_RBIT);
}

/* Wake-ups of the other end queued by signal handlers: fd * 2 + write,
 * plus one (0: a free slot). A full ring sets `deferred_retry_all`, and
 * the dispatch then has every pipe end's waiters try again; so does an
 * escape made in a handler (cap__pipe_escape). */
enum { DEFERRED = 256 };
static _Atomic uint32_t deferred[DEFERRED];
static _Atomic uint32_t deferred_next;
static atomic_bool deferred_any, deferred_retry_all;

static void defer_retry_all(void)
{
    atomic_store(&deferred_retry_all, true);
    atomic_store_explicit(&deferred_any, true, memory_order_release);
    cap__sig_note_work_left();
}

static void defer_poke(int fd, bool write)
{
    uint32_t v = (uint32_t)fd * 2 + (write ? 1 : 0) + 1;
    uint32_t start = atomic_fetch_add_explicit(&deferred_next, 1, memory_order_relaxed);
    bool queued = false;
    for (uint32_t i = 0; i < DEFERRED && !queued; i++) {
        uint32_t free_slot = 0;
        queued = atomic_compare_exchange_strong(&deferred[(start + i) % DEFERRED], &free_slot, v);
    }
    if (!queued) {
        defer_retry_all();
        return;
    }
    atomic_store_explicit(&deferred_any, true, memory_order_release);
    cap__sig_note_work_left();
}

void cap__pipe_after_foreign_xfer(int fd, bool write)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_OWNED))
        return;
    if (cap__in_signal_handler())
        defer_poke(fd, write);
    else
        cap__pipe_after_xfer(f, write);
}

static void retry_all(cap__fd *o, uint32_t gen);

/* Every thread parked on a pipe end we made tries again. */
static void retry_pipe_end(int fd, cap__fd *f, void *arg)
{
    (void)fd;
    (void)arg;
    if (atomic_load_explicit(&f->peer, memory_order_relaxed) != 0)
        retry_all(f, atomic_load_explicit(&f->gen, memory_order_relaxed));
}

void cap__pipe_run_deferred(void)
{
    if (!atomic_exchange_explicit(&deferred_any, false, memory_order_acquire))
        return;
    for (int i = 0; i < DEFERRED; i++) {
        uint32_t v = atomic_exchange(&deferred[i], 0);
        if (v == 0)
            continue;
        /* The descriptor may have been closed and reused since: then this
         * is a spurious wake-up of the new life's other end, harmless. */
        cap__fd *f = cap__fd_peek((int)((v - 1) / 2));
        if (f != NULL && cap__fd_has(f, CAP__FDF_OWNED))
            cap__pipe_after_xfer(f, ((v - 1) & 1) != 0);
    }
    if (atomic_exchange(&deferred_retry_all, false))
        cap__fd_foreach(retry_pipe_end, NULL);
}

/* Every thread waiting on o (life gen) tries again, having seen both
 * seqs move. */
static void retry_all(cap__fd *o, uint32_t gen)
{
    cap__spin_lock(&o->lock);
    if (atomic_load(&o->gen) == gen) {
        atomic_fetch_add(&o->seq[CAP__IO_READ], 1);
        atomic_fetch_add(&o->seq[CAP__IO_WRITE], 1);
        cap__io_wake_all_locked(o, 0);
    }
    cap__spin_unlock(&o->lock);
}

void cap__pipe_resized(int fd)
{
    if (cap__in_signal_handler()) {
        cap__fd_defer(CAP__FDD_RESIZED, fd, 0, 0, NULL);
        return;
    }
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_LOCAL))
        return;
    uint32_t fgen = atomic_load(&f->gen), ogen = 0;
    cap__fd *o = peer_of(f, &ogen);
    retry_all(f, fgen);
    if (o != NULL)
        retry_all(o, ogen);
}

void cap__pipe_escape(cap__fd *f, bool closing)
{
    uint32_t fgen = atomic_load(&f->gen), ogen = 0;
    cap__fd *o = peer_of(f, &ogen);
    /* Cleared before the bumps that publish it (seq_cst), so a waiter
     * that sees a bump and tries again finds the pipe armed-only. */
    if (!closing)
        atomic_fetch_and(&f->flags, ~(uint32_t)CAP__FDF_LOCAL);
    if (o != NULL)
        atomic_fetch_and(&o->flags, ~(uint32_t)CAP__FDF_LOCAL);
    if (cap__in_signal_handler()) {
        /* The retries take the ends' locks and wake threads: the code the
         * handler interrupted may hold those locks. The flags are what a
         * fork or exec made here needs at once; the waiters try again
         * at the dispatch after the handler. */
        defer_retry_all();
        return;
    }
    if (!closing)
        retry_all(f, fgen);
    if (o != NULL)
        retry_all(o, ogen);
}

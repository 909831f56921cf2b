/* SPDX-License-Identifier: MIT */
/*
 * How idle workers share one backend instance (see netio.h).
 *
 * One worker at a time (the holder) waits in the instance, under a
 * try-lock; the others sleep on their futex (worker.h's `sleeping` word),
 * exactly as with the futex poller. The holder publishes itself in
 * `holder` and then re-checks its `sleeping` word; a waker clears
 * `sleeping` (worker.c) and then reads `holder`. Both are seq_cst, so
 * either the holder sees the wake-up before blocking or the waker sees the
 * holder and kicks the instance (Dekker, as in worker.h).
 *
 * Hand-off: a holder that comes back with threads to run releases the
 * instance and wakes one futex sleeper, which takes the instance over, so
 * I/O keeps being harvested while the old holder is busy (otherwise only
 * the busy worker's periodic poll would see it).
 *
 * No sleeper without a holder: a worker whose try-lock failed marks
 * itself (in_futex / in_ring), counts itself, and then looks at the lock
 * again, blocking only if it is still held; a releaser unlocks, fences,
 * and then reads the counts and marks (all seq_cst). So either the
 * sleeper sees the lock free and goes round its loop to take it, or the
 * releaser sees the sleeper; it then clears the sleeper's `sleeping` word
 * before the futex wake, so a wake that comes before the wait is not
 * lost, and wakes it as any waker does (cap__idle_wake: a kick if the
 * sleeper has taken the instance since its mark was read). Without
 * this, a sleeper that counted itself just after a holder had looked
 * slept on while the holder ran threads: their events waited
 * for its next periodic poll, for good if the kernel held its thread
 * (a debugger's stop: io/owned_call_kicked_by_give_back_elsewhere hung).
 * The same test found the other way to it: a holder whose wait ended at
 * its own timer's deadline counted as idle and woke no one, then ran the
 * timer's thread (has_local_work now counts a due timer).
 *
 * A releaser with nothing to run comes back for the instance, unless
 * work reaches it first by another way than its harvest: a thread handed
 * to it during its idle spin, a new thread it steals, another worker's
 * due timer (CAP_MIGRATE). It then leaves idle without the instance, so
 * as it does (cap__idle_end, the poller's idle_end) it wakes a sleeper
 * if nobody holds the instance while threads wait on descriptors: with
 * three workers, a holder woken for another's lone new thread stole it
 * and computed, and the third's reader waited for good
 * (io/instance_held_when_idle_worker_steals).
 *
 * Workers with no threads of their own (may_use_instance) stay out of it
 * all, unless CAP_MIGRATE lets them run any thread: they neither hold the
 * instance nor poll it, and sleep on their futex, uncounted, until work
 * is handed to them (a new thread is dealt with a wake-up of its own). The
 * events they could harvest are other workers' threads', which run only
 * where they live; a busy worker harvests them at its next poll, an idle
 * one holds the instance. A preloaded single-threaded server on two
 * workers paid for it per request: its thread-less worker held the
 * instance or was woken to, and woke the other per event (0.33-0.39
 * context switches per request, 1.24x plain glibc's CPU per request, and
 * 0.85x its requests/s while another process took a CPU: bench/redis);
 * now 0.01, 1.18x and 1.06x, as on one worker.
 *
 * Disk rings: a worker with disk requests of its own in flight sleeps in
 * its disk queue instead (cap__disk_wait: with CAP_DISKIO=uring, in
 * io_uring_enter on its ring), so their completions wake it directly;
 * if it holds the instance, the instance's descriptor is polled from
 * there too (netio wait_fd; a backend without one keeps the classic
 * wait). Such a worker publishes itself in `in_ring` and then re-checks
 * `sleeping`, and wakers read `in_ring` after clearing `sleeping` and
 * wake it with cap__disk_wake (the same Dekker pairing as `holder`).
 */
#include "io/io.h"
#include "io/netio.h"

#include <stdatomic.h>

#include "runtime/config.h"
#include "sched/timer.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/futex.h"
#include "util/spin.h"


static cap__spin instance_lock = CAP__SPIN_INIT;
static _Atomic(cap__worker *) holder;
static atomic_int futex_sleepers;
static atomic_int ring_sleepers;
static _Atomic uint8_t in_futex[CAP__MAX_WORKERS];
static _Atomic uint8_t in_ring[CAP__MAX_WORKERS];

bool cap__idle_acquire(cap__worker *w)
{
    if (!cap__spin_trylock(&instance_lock))
        return false;
    atomic_store(&holder, w);
    return true;
}

void cap__idle_forked(void)
{
    instance_lock = (cap__spin)CAP__SPIN_INIT;
    atomic_store(&holder, NULL);
    atomic_store(&futex_sleepers, 0);
    atomic_store(&ring_sleepers, 0);
    /* Read first, written only where set (a lost worker's): the child is
     * alone, and every page it writes is copied. */
    for (int i = 0; i < CAP__MAX_WORKERS; i++) {
        if (atomic_load_explicit(&in_futex[i], memory_order_relaxed) != 0)
            atomic_store_explicit(&in_futex[i], 0, memory_order_relaxed);
        if (atomic_load_explicit(&in_ring[i], memory_order_relaxed) != 0)
            atomic_store_explicit(&in_ring[i], 0, memory_order_relaxed);
    }
}

/* Whether w has a use for the instance: threads of its own (started
 * there and not ended), or any thread under CAP_MIGRATE. One with none
 * could harvest only other workers' events, whose threads run only where
 * they live: holding the instance, or being woken to hold it while they
 * run, bought a wake-up of their worker per event and of it per hand-off,
 * for nothing (see the top). */
static bool may_use_instance(const cap__worker *w)
{
    return cap__cfg.migrate || atomic_load_explicit(&w->homed, memory_order_relaxed) != 0;
}

bool cap__idle_should_block(cap__worker *w)
{
    return w != NULL && atomic_load(&w->sleeping) == 1;
}

/* Whether w, back from the instance, will run threads next: work handed
 * to it, or a timer of its own that is due (a harvest that ended at w's
 * deadline found nothing, but the timer's thread runs as soon as w looks
 * at its timers, after the release). */
static bool has_local_work(cap__worker *w)
{
    if (cap__worker_has_own_work(w))
        return true;
    uint64_t next = cap__timer_next(&w->timers);
    return next != CAP__FOREVER && next <= cap__now();
}

/* Wakes one sleeper other than w to hold the instance. Clearing its
 * `sleeping` word makes the wake-up stick if it has not reached its wait
 * yet (the wait returns at once); the wake-up is spurious for it: it goes
 * round its loop and becomes the holder. If the word was already clear, a
 * waker has woken it (it clears the word, then wakes) or it is on its way
 * out: a second wake would be a system call for nothing, which every
 * cross-worker wake-up made before the holder's release (the harvest's)
 * would otherwise pay. */
static void wake_a_sleeper(cap__worker *w)
{
    for (int i = 0; i < cap__rt.nworkers && i < CAP__MAX_WORKERS; i++) {
        cap__worker *o = &cap__rt.workers[i];
        if (o == w)
            continue;
        if (atomic_load(&in_futex[i]) || atomic_load(&in_ring[i])) {
            /* Its mark was read before the exchange: by now it may have
             * left that sleep, gone round its loop and taken the
             * instance, blocking in it with `sleeping` set anew. As every
             * waker that clears the word, this one then reads `holder`
             * (cap__idle_wake) and kicks the instance if o holds it. A
             * futex wake alone left o blocked in ppoll for good with its
             * word clear, so no later waker woke it either
             * (io/signal_jump_out_of_runtime_calls, poll-uring/w2, once
             * in CI: main in o's inbox). */
            if (atomic_exchange(&o->sleeping, 0) != 0)
                cap__idle_wake(o, cap__netio_active->kick);
            return;
        }
    }
}

static bool any_sleeper(void)
{
    return atomic_load(&futex_sleepers) != 0 || atomic_load(&ring_sleepers) != 0;
}

void cap__idle_release(cap__worker *w)
{
    atomic_store(&holder, NULL);
    cap__spin_unlock(&instance_lock);
    /* The unlock before the sleepers' counts and marks (see the top). */
    atomic_thread_fence(memory_order_seq_cst);
    /* w == NULL: a busy worker's poll; it is busy by definition. */
    if (!any_sleeper() || (w != NULL && !has_local_work(w)))
        return;
    wake_a_sleeper(w);
}

void cap__idle_end(cap__worker *w)
{
    /* After w's own release, if it made one (program order): these loads
     * see every sleeper that release saw, and any counted since. */
    if (!any_sleeper() || atomic_load(&instance_lock.held) != 0 || !cap__io_fd_pending())
        return;
    wake_a_sleeper(w);
}

/* A worker about to sleep without the instance, marked and counted:
 * whether it may block. Its try-lock failed, but the holder may have let
 * go since, before it could see the mark; then nobody would hold the
 * instance while it slept (a busy holder polls only now and then, and
 * not at all while the kernel holds its thread). The mark and the count
 * come before this load, the unlock before the releaser's loads (both
 * seq_cst): either it sees the lock free and goes round its loop to take
 * it, or the releaser sees it and wakes it. */
static bool sleeper_may_block(void)
{
    return atomic_load(&instance_lock.held) != 0;
}

void cap__idle_futex_wait(cap__worker *w, uint64_t deadline)
{
    if (w->id < CAP__MAX_WORKERS)
        atomic_store(&in_futex[w->id], 1);
    atomic_fetch_add(&futex_sleepers, 1);
    if (sleeper_may_block())
        cap__futex_wait((uint32_t *)&w->sleeping, 1, deadline);
    if (w->id < CAP__MAX_WORKERS)
        atomic_store(&in_futex[w->id], 0);
    atomic_fetch_sub(&futex_sleepers, 1);
}

void cap__idle_wake(cap__worker *w, void (*kick)(void))
{
    if (atomic_load(&holder) == w)
        kick(); /* in the ring too: the instance's descriptor is polled there */
    else if (w->id < CAP__MAX_WORKERS && atomic_load(&in_ring[w->id]))
        cap__disk_wake(w);
    else
        cap__futex_wake((uint32_t *)&w->sleeping, 1);
}

/* Sleeps in w's disk queue (see the header comment); false if it cannot
 * (nothing of its own in flight, or w holds an instance that cannot be
 * polled from there), and the caller sleeps as before. */
static bool ring_wait(cap__worker *w, uint64_t deadline, bool held)
{
    int inst_fd = -1;
    if (held) {
        inst_fd = cap__netio_active->wait_fd != NULL ? cap__netio_active->wait_fd() : -1;
        if (inst_fd < 0)
            return false;
    }
    if (w->id >= CAP__MAX_WORKERS || !cap__disk_wait_prepare(w, inst_fd))
        return false;
    atomic_store(&in_ring[w->id], 1);
    atomic_fetch_add(&ring_sleepers, 1);
    bool fired = cap__disk_wait(w, deadline,
                                cap__idle_should_block(w) && (held || sleeper_may_block()));
    atomic_store(&in_ring[w->id], 0);
    atomic_fetch_sub(&ring_sleepers, 1);
    if (fired && held)
        cap__netio_active->harvest(0);
    return true;
}

int64_t cap__idle_timeout_ns(uint64_t deadline)
{
    if (deadline == CAP__FOREVER)
        return -1;
    uint64_t now = cap__now();
    return deadline > now ? (int64_t)(deadline - now) : 0;
}

/* ---- the poller of every descriptor backend ---------------------------- */

static void netio_wait_idle(cap__worker *w, uint64_t deadline)
{
    cap__disk_flush(w);
    if (w->local.len != 0) /* the flush completed requests of our own threads */
        return;
    if (!may_use_instance(w)) { /* see the top: until work is handed to it */
        cap__futex_wait((uint32_t *)&w->sleeping, 1, deadline);
        return;
    }
    if (!cap__idle_acquire(w)) {
        if (!ring_wait(w, deadline, false))
            cap__idle_futex_wait(w, deadline);
        return;
    }
    if (!ring_wait(w, deadline, true))
        cap__netio_active->harvest(cap__idle_should_block(w) ? cap__idle_timeout_ns(deadline)
                                                             : 0);
    cap__idle_release(w);
}

/* A poll releases the instance as a busy worker's does (NULL: a sleeper
 * is woken to hold it), except an idle worker's while only disk requests
 * are pending: that worker is about to spin on its own ring and wait in
 * it, and the sleepers wait in theirs, so nothing needs a holder, and
 * releasing as w wakes a sleeper only if the harvest gave w threads to
 * run. As NULL, with O_DIRECT readers on two workers each went idle with
 * a read in flight, polled, and woke the other out of its ring for
 * nothing (0.15-0.2 wake_efd writes per read at 8 readers). With threads
 * parked on descriptors the sleeper is still woken, so the instance is
 * watched during the spin (pipetest on two workers, which has no disk
 * requests, looked slower with more system calls per token when it was
 * not: a loaded machine, not interleaved, so not proven either way). */
static void netio_poll(cap__worker *w, bool idle)
{
    cap__disk_flush(w);
    if (!may_use_instance(w) || !cap__idle_acquire(NULL))
        return;
    cap__netio_active->harvest(0);
    cap__idle_release(idle && !cap__io_fd_pending() ? w : NULL);
}

static void netio_wake(cap__worker *w)
{
    cap__idle_wake(w, cap__netio_active->kick);
}

/* Pool threads doing blocking calls (CAP_DISKIO=threads, resolver calls)
 * need a CPU to finish them; a worker spinning on it only delays them (on
 * two CPUs with two workers, each such call waited for a spin to end). */
static bool netio_spin_ok(void)
{
    return !cap__offload_busy();
}

const cap__poller cap__poller_netio = {
    .name = "netio",
    .wait = netio_wait_idle,
    .wake = netio_wake,
    .poll = netio_poll,
    .idle_end = cap__idle_end,
    .pending = cap__io_pending,
    .spin = cap__disk_spin,
    .spin_end = cap__disk_spin_end,
    .spin_awaits = cap__disk_spin_awaits,
    .spin_ok = netio_spin_ok,
};

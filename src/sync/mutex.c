/* SPDX-License-Identifier: MIT */
/*
 * Mutexes: Drepper's "mutex 2" from "Futexes Are Tricky" on our address
 * waits (park.h) instead of the kernel futex, with two additions taken
 * from Go's sync.Mutex: a short spin before parking, and a hand-off to a
 * waiter that has been passed over for too long.
 *
 * state: FREE (0), LOCKED (1, nobody waits), CONTENDED (2, someone may
 * wait), plus two flags that only ever appear with CONTENDED:
 *   STARVING  a waiter that was woken and found the lock taken again has
 *             waited more than STARVE_NS since it first parked;
 *   HANDOFF   the last unlocker found STARVING and, instead of freeing the
 *             lock, handed it to the queued waiters: the first of them to
 *             clear HANDOFF owns it. Nobody else can take it meanwhile.
 *
 * lock: one CAS FREE->LOCKED. unlock: one CAS LOCKED->FREE; anything else
 * goes to the slow path, which frees the lock (or hands it off) and wakes
 * one waiter. A locker that fails marks the word CONTENDED before every
 * park, so an unlock of LOCKED knows nobody waits; a woken waiter takes
 * the lock as CONTENDED since others may still wait. No system call ever,
 * and waiters park the user thread only.
 *
 * Barging: a running thread may take a FREE lock before a woken waiter
 * runs, which keeps handoff cheap under contention; STARVING bounds how
 * long that can go on for any one waiter (about STARVE_NS plus one
 * critical section), as Go's starvation mode does.
 *
 * Who may claim a HANDOFF: only a thread that has parked on this mutex at
 * least once ("queued"), so a newcomer cannot barge in front of the
 * waiters. Some queued thread always sees it: STARVING is set only by a
 * queued thread W, and W stays in the wait loop until it owns the lock; if
 * W times out it either claims a HANDOFF it finds or clears STARVING before
 * leaving (a flag cleared by a waiter that did not set it is only a lost
 * hint: the starving waiter sets it again after its next wake-up). The
 * unlocker wakes one parked thread; if none is parked yet, W is in flight
 * (runnable, or about to park: the park compares the word, which the
 * hand-off changed, and returns at once).
 *
 * Forks: in a fork's child the parent's waiters are gone (worker.h), and
 * a STARVING flag one of them set would make the child's unlock hand the
 * lock to nobody: the mutex would stay taken for good, and the classic
 * pthread_atfork use (prepare locks, child unlocks) would leave the child
 * a dead lock. So a waiter that sets STARVING first records the fork
 * generation it runs in (the word `gen`, the public struct's fourth),
 * and an unlock honours STARVING only if it was set in the unlocker's
 * generation: in the child the parent's flag is dropped and the lock
 * freed; a child waiter that starves sets the flag again, with the
 * child's generation. (Misreading gen only costs fairness: the lock is
 * freed instead of handed off, and the starving waiter flags again.)
 * Likewise a HANDOFF made in the parent (an unlock just before the fork,
 * the starving waiter not yet run) is for a waiter lost in the child: a
 * HANDOFF is only ever made in the STARVING flag's generation, so one
 * found with gen from another generation is the parent's, and the
 * child's lock or trylock takes it as if the lock were free.
 *
 * Spinning: with more than one worker the holder may be running on another
 * one, and the critical sections this protects are usually far shorter than
 * a park and a cross-worker wake-up, so a locker first spins for a few
 * microseconds (SPIN_ROUNDS x SPIN_PAUSES pauses) watching for FREE. On
 * one worker the holder cannot run while we spin, so we never do.
 *
 * RECURSIVE and ERRORCHECK record their owner (cap__sync_self_id) and,
 * RECURSIVE, the depth; only the owner writes them while it holds the
 * lock, others only compare the owner with their own id. NORMAL records
 * nothing, to keep its fast path a single atomic.
 *
 * Process-shared mutexes (SHARED in the type word) keep the same word in
 * memory other processes map, and their waiters wait in the kernel
 * (sync/shared_wait.c), where another process's unlock can wake them:
 * Drepper's mutex 2 as it is, without STARVING and HANDOFF, whose fork
 * generation and "queued" test name this process's waiters only. Their
 * owner id carries the process id (cap__sync_shared_self_id), and the
 * word `gen` (free there: no STARVING) the holder's slot generation, so
 * a thread that reuses the slot of one that exited holding the mutex is
 * not taken for it.
 *
 * Robust mutexes (ROBUST in the type word; sync/robust.c notes who
 * holds them) track their owner whatever their kind. Their owner word also
 * says what became of the last holder: CAP__ROBUST_OWNER_DIED (it ended
 * holding the mutex; the lock word was freed for a waiter) or
 * CAP__ROBUST_UNRECOVERABLE (one told so unlocked without making it
 * consistent). A locker that takes the lock word reads it (robust_taken):
 * owner died, it holds the mutex marked INCONSISTENT (in `count`) and is
 * told EOWNERDEAD; unrecoverable, it frees the lock word again, which
 * passes the news on to the next waiter, and is told ENOTRECOVERABLE. A
 * process-shared one's waiters wait in slices (CAP__ROBUST_CHECK_NS at
 * first, doubling to CAP__ROBUST_CHECK_MAX_NS) and after each look whether the holder's process has gone: the first to
 * swap the owner word from that holder's id to OWNER_DIED takes the lock
 * word over (it cannot be freed by anyone else) and goes on as above. A
 * holder's id is written only after its lock word is taken and cleared
 * before it is freed, so an owner word with a live-looking id names the
 * thread that holds the lock word; a process that dies between the two
 * (id not yet, or no longer, written) leaves a mutex held for good, as
 * glibc's does without its pending-operation slot.
 *
 * After its last atomic on the state word an unlocker touches the mutex
 * only as a key for cap__wake_on, which never dereferences it, so a mutex
 * may be destroyed and freed as soon as another thread has locked and
 * unlocked it (glibc bug 13690 is this race done wrong).
 */
#include <errno.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "util/spin.h"

enum {
    FREE = 0,
    LOCKED = 1,
    CONTENDED = 2,
    HELD = LOCKED | CONTENDED, /* mask: 0 means free */
    STARVING = 4,
    HANDOFF = 8,
};
enum { SHARED = 1 << 30, ROBUST = 1 << 29 }; /* in the type word, with the kind */
enum { INCONSISTENT = 1u << 31 }; /* in `count`: a robust mutex taken as owner died */
enum { SPIN_ROUNDS = 8, SPIN_PAUSES = 30 };
#define STARVE_NS UINT64_C(1000000) /* 1 ms, as Go's starvationThresholdNs */

static _Atomic uint32_t *word(cap_mutex_t *m)
{
    return CAP__A32(&m->state);
}

/* The fork generation in which STARVING was last set; in a process-shared
 * mutex, which has no STARVING, the owner's slot generation (see the top). */
static _Atomic uint32_t *gen(cap_mutex_t *m)
{
    return CAP__A32(&m->reserved);
}

static _Atomic uint64_t *owner_of(const cap_mutex_t *m)
{
    return CAP__A64(&((cap_mutex_t *)m)->owner);
}

static bool try_acquire(cap_mutex_t *m)
{
    uint32_t expected = FREE;
    return atomic_compare_exchange_strong_explicit(word(m), &expected, LOCKED,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* A CAS of the state word from *s; on failure *s is the current value. */
static bool cas(_Atomic uint32_t *w, uint32_t *s, uint32_t next)
{
    return atomic_compare_exchange_weak_explicit(w, s, next, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Whether STARVING (or the HANDOFF made for it) was set by a waiter of
 * this process's generation (see the top), s being a state with one. */
static bool starving_here(cap_mutex_t *m)
{
    atomic_thread_fence(memory_order_acquire); /* the flag's gen (acquire_slow) */
    return atomic_load_explicit(gen(m), memory_order_relaxed) == cap__fork_gen;
}

/* In a fork's child: takes a lock that the parent's last unlock handed off
 * to a waiter lost in the fork (see the top). */
static bool claim_lost_handoff(cap_mutex_t *m)
{
    _Atomic uint32_t *w = word(m);
    uint32_t s = atomic_load_explicit(w, memory_order_relaxed);
    while ((s & HANDOFF) && !starving_here(m))
        if (cas(w, &s, CONTENDED))
            return true;
    return false;
}

/* The spin before the first park (see the top): true if it got the lock. */
static bool spin(cap_mutex_t *m)
{
    if (cap__rt.nworkers < 2)
        return false;
    _Atomic uint32_t *w = word(m);
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        for (int j = 0; j < SPIN_PAUSES; j++)
            cap__cpu_relax();
        uint32_t s = atomic_load_explicit(w, memory_order_relaxed);
        if (s & (STARVING | HANDOFF))
            return false; /* a passed-over waiter goes first: queue up */
        if (s == FREE && try_acquire(m))
            return true;
    }
    return false;
}

/* A queued waiter whose deadline passed: it may not leave a hand-off
 * stranded or a STARVING flag behind it (see the top). Returns 0 if it
 * ends up with the lock after all. */
static int give_up(_Atomic uint32_t *w)
{
    uint32_t s = atomic_load_explicit(w, memory_order_relaxed);
    for (;;) {
        if (s & HANDOFF) {
            if (cas(w, &s, CONTENDED))
                return 0;
        } else if (s & STARVING) {
            if (cas(w, &s, s & ~(uint32_t)STARVING))
                return ETIMEDOUT;
        } else {
            return ETIMEDOUT;
        }
    }
}

/* A process-shared robust mutex held by a thread whose process has gone:
 * takes its lock word over, with the owner word OWNER_DIED (see the top).
 * True if the caller now holds it. */
static bool take_from_dead_process(cap_mutex_t *m)
{
    uint64_t id = atomic_load_explicit(owner_of(m), memory_order_relaxed);
    if (id == 0 || id >= CAP__ROBUST_OWNER_DIED)
        return false;
    if (!cap__robust_process_gone(cap__sync_shared_id_pid(id)))
        return false;
    if (!atomic_compare_exchange_strong_explicit(owner_of(m), &id, CAP__ROBUST_OWNER_DIED,
                                                 memory_order_acquire, memory_order_relaxed))
        return false; /* another waiter took it over, or it changed hands */
    atomic_store_explicit(word(m), CONTENDED, memory_order_relaxed); /* others may wait */
    return true;
}

/* A process-shared mutex's contended lock (see the top). */
static int acquire_shared(cap_mutex_t *m, cap__timeout *to)
{
    _Atomic uint32_t *w = word(m);
    while (atomic_exchange_explicit(w, CONTENDED, memory_order_acquire) != FREE)
        if (cap__shared_wait(w, CONTENDED, to, CAP__PARK_MUTEX, false) == ETIMEDOUT)
            return ETIMEDOUT;
    return 0;
}

/* A process-shared robust mutex's contended lock, with an optional
 * timeout: its waits last CAP__ROBUST_CHECK_NS, then twice as long each
 * time up to CAP__ROBUST_CHECK_MAX_NS, and after each it
 * looks whether the holder's process has gone (see the top). Apart from
 * acquire_slow, with the caller's timeout made in the caller's frame: its
 * frames count against a runtime call's bound on linked stacks
 * (stack/runtime_calls.h), which the timed wait inside comes near. */
static inline __attribute__((always_inline)) int acquire_robust_shared(cap_mutex_t *m,
                                                                cap__timeout *to)
{
    /* (no spin first: cap__shared_wait yields its worker a few times
     * before it waits in the kernel, watching the word) */
    cap__timeout slice; /* a monotonic time is its own deadline */
    slice.clock = CLOCK_MONOTONIC;
    uint64_t interval = CAP__ROBUST_CHECK_NS;
    while (atomic_exchange_explicit(word(m), CONTENDED, memory_order_acquire) != FREE) {
        uint64_t end = cap__now() + interval;
        if (interval < CAP__ROBUST_CHECK_MAX_NS)
            interval *= 2; /* a long wait looks less often */
        bool last = to != NULL && to->deadline <= end;
        slice.abs.tv_sec = (time_t)(end / 1000000000u);
        slice.abs.tv_nsec = (long)(end % 1000000000u);
        slice.deadline = end;
        if (cap__shared_wait(word(m), CONTENDED, last ? to : &slice, CAP__PARK_MUTEX, false) ==
                ETIMEDOUT && last)
            return ETIMEDOUT;
        if (take_from_dead_process(m))
            return 0; /* held, its owner word OWNER_DIED: robust_taken says so */
    }
    return 0;
}

/* The contended lock word, with an optional timeout (acquire_slow). */
static inline __attribute__((always_inline)) int acquire_word_slow(cap_mutex_t *m,
                                                                  cap__timeout *to)
{
    if (spin(m))
        return 0;
    if (m->type & SHARED)
        return acquire_shared(m, to);
    _Atomic uint32_t *w = word(m);
    bool queued = false; /* parked at least once: may claim a HANDOFF */
    uint64_t since = 0;  /* when we first parked */
    uint32_t s = atomic_load_explicit(w, memory_order_relaxed);
    for (;;) {
        uint32_t want; /* the value we park on */
        if (s & HANDOFF) {
            if (queued || !starving_here(m)) { /* a parent's: lost (see the top) */
                if (cas(w, &s, CONTENDED)) /* ours; others may still wait */
                    return 0;
                continue;
            }
            want = s; /* a newcomer waits behind the queued waiters */
        } else if ((s & HELD) == FREE) {
            if (cas(w, &s, CONTENDED))
                return 0;
            continue;
        } else {
            want = CONTENDED | (s & STARVING);
            if (queued && !(s & STARVING) && cap__now() - since >= STARVE_NS) {
                want |= STARVING; /* passed over for too long */
                atomic_store_explicit(gen(m), cap__fork_gen, memory_order_relaxed);
                /* gen before the flag: pairs with release_slow's fence */
                atomic_thread_fence(memory_order_release);
            }
            if (want != s && !cas(w, &s, want))
                continue;
        }
        if (!queued) {
            queued = true;
            since = cap__now();
        }
        if (cap__sync_wait(w, want, to, CAP__PARK_MUTEX, false) == ETIMEDOUT)
            return give_up(w);
        s = atomic_load_explicit(w, memory_order_relaxed);
    }
}

/* Unlock with waiters possibly queued (s: the state last seen): free the
 * lock, or hand it off if a waiter starves, then wake one waiter. */
static int release_slow(cap_mutex_t *m, uint32_t s)
{
    _Atomic uint32_t *w = word(m);
    if (m->type & SHARED) {
        if ((s & HELD) == FREE)
            return EPERM;
        if (atomic_exchange_explicit(w, FREE, memory_order_release) & CONTENDED)
            cap__shared_wake(w, 1);
        return 0;
    }
    uint32_t next;
    do {
        if ((s & HELD) == FREE || (s & HANDOFF))
            return EPERM; /* not locked, or already given to a waiter */
        next = (s & STARVING) && starving_here(m) ? (CONTENDED | HANDOFF) : FREE;
    } while (!atomic_compare_exchange_weak_explicit(w, &s, next, memory_order_release,
                                                    memory_order_relaxed));
    if (s & CONTENDED)
        cap__wake_on(w, 1);
    return 0;
}

static int release(cap_mutex_t *m)
{
    uint32_t s = LOCKED;
    if (atomic_compare_exchange_strong_explicit(word(m), &s, FREE, memory_order_release,
                                                memory_order_relaxed))
        return 0; /* nobody waits: one CAS */
    return release_slow(m, s);
}

/* The kind (CAP_MUTEX_*) a type word holds. */
static int kind_of(int type)
{
    return type & ~(SHARED | ROBUST);
}

static bool valid_kind(int type)
{
    int kind = kind_of(type);
    return kind == CAP_MUTEX_NORMAL || kind == CAP_MUTEX_RECURSIVE ||
           kind == CAP_MUTEX_ERRORCHECK;
}

static bool tracks_owner(int type)
{
    return (type & ROBUST) ||
           kind_of(type) == CAP_MUTEX_RECURSIVE || kind_of(type) == CAP_MUTEX_ERRORCHECK;
}

static const cap__holder NOBODY = { 0, 0 };

/* The caller as the owner of a mutex of this type (a process-shared
 * one's: with its slot generation, see the top). */
static cap__holder self_id(int type)
{
    return cap__sync_holder(type & SHARED);
}

static bool held_by_caller(cap_mutex_t *m, cap__holder self)
{
    if (atomic_load_explicit(owner_of(m), memory_order_relaxed) != self.id)
        return false;
    return !(m->type & SHARED) || atomic_load_explicit(gen(m), memory_order_relaxed) == self.gen;
}

static void set_owner(cap_mutex_t *m, cap__holder h, uint32_t depth)
{
    if (m->type & SHARED)
        atomic_store_explicit(gen(m), h.gen, memory_order_relaxed);
    atomic_store_explicit(owner_of(m), h.id, memory_order_relaxed);
    m->count = depth;
}

/* The contended lock, without a timeout; then, unless depth is 0, self
 * recorded as the owner at depth. The owner is recorded here, so that
 * callers reach this by a tail call and their frames do not add to this
 * one's: under linked stacks they count against a runtime call's bound
 * (stack/runtime_calls.h), which a process-shared mutex's wait in slices
 * and a condition wait taking its mutex back come near. */
static int acquire_slow(cap_mutex_t *m, cap__holder self, uint32_t depth)
{
    int rc = acquire_word_slow(m, NULL);
    if (rc == 0 && depth != 0)
        set_owner(m, self, depth);
    return rc;
}

/* acquire_slow with an absolute timeout, made here (for the same reason;
 * apart, so that the untimed waits' frame does not hold it). */
static int acquire_slow_timed(cap_mutex_t *m, clockid_t clock, const struct timespec *abs,
                              cap__holder self, uint32_t depth)
{
    cap__timeout to; /* POSIX: abs is checked only when we would block */
    int rc = cap__timeout_init(&to, clock, abs);
    if (rc == 0)
        rc = acquire_word_slow(m, &to);
    if (rc == 0 && depth != 0)
        set_owner(m, self, depth);
    return rc;
}

/* Takes the lock word, with an optional absolute timeout; then, unless
 * depth is 0, records self as the owner at depth. */
static int acquire(cap_mutex_t *m, clockid_t clock, const struct timespec *abs,
                   cap__holder self, uint32_t depth)
{
    if (!try_acquire(m)) {
        if (abs == NULL)
            return acquire_slow(m, self, depth);
        return acquire_slow_timed(m, clock, abs, self, depth);
    }
    if (depth != 0)
        set_owner(m, self, depth);
    return 0;
}

/* Recursion depth (a robust one's without the INCONSISTENT flag). */
static uint32_t depth_of(const cap_mutex_t *m)
{
    return m->type & ROBUST ? m->count & ~(uint32_t)INCONSISTENT : m->count;
}

/* Whether one more level would not fit (2^32-1 levels, a robust mutex
 * 2^31-1: its top bit is the INCONSISTENT flag). */
static bool at_max_depth(const cap_mutex_t *m)
{
    return depth_of(m) == (m->type & ROBUST ? INCONSISTENT - 1 : UINT32_MAX);
}

/* The end of a robust mutex's lock, which the caller noted
 * (cap__robust_note) before trying for the lock word with the result rc:
 * if it took the word (0), what became of the last holder decides the
 * result (see the top); the note goes unless the caller holds m. */
static int robust_taken(cap_mutex_t *m, cap__holder self, uint32_t depth, int rc)
{
    if (rc == 0) {
        uint64_t last = atomic_load_explicit(owner_of(m), memory_order_relaxed);
        if (last == CAP__ROBUST_UNRECOVERABLE) {
            release(m); /* the next waiter learns it the same way */
            rc = ENOTRECOVERABLE;
        } else if (last == CAP__ROBUST_OWNER_DIED) {
            set_owner(m, self, depth | INCONSISTENT);
            return EOWNERDEAD;
        } else {
            set_owner(m, self, depth);
            return 0;
        }
    }
    cap__robust_forget(m);
    return rc;
}

/* A process-shared robust mutex's lock word, at depth 1. Reached from
 * lock_common by a tail call, so lock_common's frame is gone while this
 * one waits: the frames count against a runtime call's bound on linked
 * stacks (stack/runtime_calls.h), which the wait in slices comes near. */
static __attribute__((noinline)) int take_robust_shared(cap_mutex_t *m, cap__holder self,
                                                       clockid_t clock,
                                                       const struct timespec *abs)
{
    int rc = cap__robust_note(m);
    if (rc != 0)
        return rc;
    if (try_acquire(m)) {
        rc = 0;
    } else if (abs == NULL) {
        rc = acquire_robust_shared(m, NULL);
    } else { /* POSIX: abs is checked only when we would block */
        cap__timeout to;
        rc = cap__timeout_init(&to, clock, abs);
        if (rc == 0)
            rc = acquire_robust_shared(m, &to);
    }
    return robust_taken(m, self, 1, rc);
}

/* Takes m for the caller (self) at depth, recording it as owner if m
 * tracks one; not a process-shared robust one (take_robust_shared). */
static int take(cap_mutex_t *m, cap__holder self, uint32_t depth, clockid_t clock,
                const struct timespec *abs)
{
    if (m->type & ROBUST) {
        int rc = cap__robust_note(m);
        if (rc != 0)
            return rc;
        return robust_taken(m, self, depth, acquire(m, clock, abs, NOBODY, 0));
    }
    return acquire(m, clock, abs, self, tracks_owner(m->type) ? depth : 0);
}

/* The holder lets go: robust records and marks, the owner word, then the
 * lock word. */
static int let_go(cap_mutex_t *m)
{
    if (m->type & ROBUST) {
        cap__robust_forget(m);
        if (m->count & INCONSISTENT) { /* not made consistent: unusable */
            if (m->type & SHARED)
                atomic_store_explicit(gen(m), 0, memory_order_relaxed);
            atomic_store_explicit(owner_of(m), CAP__ROBUST_UNRECOVERABLE, memory_order_relaxed);
            m->count = 0;
            return release(m);
        }
    }
    if (tracks_owner(m->type))
        set_owner(m, NOBODY, 0);
    return release(m);
}

static int lock_common(cap_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    int type = m->type;
    if (!valid_kind(type))
        return EINVAL;
    if (!tracks_owner(type))
        return acquire(m, clock, abs, NOBODY, 0);
    cap__holder self = self_id(type);
    if (held_by_caller(m, self)) {
        if (kind_of(type) == CAP_MUTEX_ERRORCHECK)
            return EDEADLK;
        if (kind_of(type) == CAP_MUTEX_RECURSIVE) {
            if (at_max_depth(m))
                return EAGAIN;
            m->count++;
            return 0;
        }
        /* a robust NORMAL one: waits for itself, as glibc's does */
    }
    if ((type & (ROBUST | SHARED)) == (ROBUST | SHARED))
        return take_robust_shared(m, self, clock, abs); /* a tail call: see there */
    return take(m, self, 1, clock, abs);
}

/* ---- public ---------------------------------------------------------- */

int cap_mutex_init(cap_mutex_t *m, const cap_mutexattr_t *attr)
{
    if (m == NULL)
        return EINVAL;
    int type = attr != NULL ? attr->type : CAP_MUTEX_NORMAL;
    if ((type & (SHARED | ROBUST)) || !valid_kind(type))
        return EINVAL;
    *m = (cap_mutex_t)CAP_MUTEX_INITIALIZER;
    m->type = type;
    if (attr != NULL && attr->pshared == CAP_PROCESS_SHARED)
        m->type |= SHARED;
    if (attr != NULL && attr->robust == CAP_MUTEX_ROBUST)
        m->type |= ROBUST;
    return 0;
}

int cap_mutex_destroy(cap_mutex_t *m)
{
    if (m == NULL)
        return EINVAL;
    return atomic_load(word(m)) != FREE ? EBUSY : 0;
}

int cap_mutex_lock(cap_mutex_t *m)
{
    if (m->type == CAP_MUTEX_NORMAL && try_acquire(m))
        return 0; /* the fast path: one CAS */
    return lock_common(m, CLOCK_REALTIME, NULL);
}

int cap_mutex_timedlock(cap_mutex_t *m, const struct timespec *abstime)
{
    return lock_common(m, CLOCK_REALTIME, abstime);
}

int cap_mutex_clocklock(cap_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return lock_common(m, clock, abstime);
}

int cap_mutex_trylock(cap_mutex_t *m)
{
    int type = m->type;
    if (!valid_kind(type))
        return EINVAL;
    if (!tracks_owner(type))
        return try_acquire(m) || claim_lost_handoff(m) ? 0 : EBUSY;
    cap__holder self = self_id(type);
    if (kind_of(type) == CAP_MUTEX_RECURSIVE && held_by_caller(m, self)) {
        if (at_max_depth(m))
            return EAGAIN;
        m->count++;
        return 0;
    }
    if (!(type & ROBUST)) {
        if (!try_acquire(m) && !claim_lost_handoff(m))
            return EBUSY;
        set_owner(m, self, 1);
        return 0;
    }
    int rc = cap__robust_note(m);
    if (rc != 0)
        return rc;
    bool taken =
        try_acquire(m) || claim_lost_handoff(m) || ((type & SHARED) && take_from_dead_process(m));
    return robust_taken(m, self, 1, taken ? 0 : EBUSY);
}

int cap_mutex_unlock(cap_mutex_t *m)
{
    int type = m->type;
    if (!valid_kind(type))
        return EINVAL;
    if (!tracks_owner(type))
        return release(m); /* one CAS */
    if (!held_by_caller(m, self_id(type)))
        return EPERM;
    if (kind_of(type) == CAP_MUTEX_RECURSIVE && depth_of(m) > 1) {
        m->count--;
        return 0;
    }
    return let_go(m);
}

int cap_mutex_consistent(cap_mutex_t *m)
{
    if (m == NULL || !valid_kind(m->type) || !(m->type & ROBUST) ||
        !held_by_caller(m, self_id(m->type)) || !(m->count & INCONSISTENT))
        return EINVAL;
    m->count &= ~(uint32_t)INCONSISTENT;
    return 0;
}

/* ---- for robust.c ----------------------------------------------------- */

void cap__mutex_owner_died(cap_mutex_t *m)
{
    if (m->type & SHARED)
        atomic_store_explicit(gen(m), 0, memory_order_relaxed);
    atomic_store_explicit(owner_of(m), CAP__ROBUST_OWNER_DIED, memory_order_relaxed);
    m->count = 0;
    release(m);
}

/* ---- for condition waits --------------------------------------------- */

int cap__mutex_check_owner(const cap_mutex_t *m)
{
    if (!tracks_owner(m->type))
        return 0;
    return held_by_caller((cap_mutex_t *)m, self_id(m->type)) ? 0 : EPERM;
}

int cap__mutex_release_for_wait(cap_mutex_t *m, uint32_t *depth)
{
    *depth = 0;
    if (tracks_owner(m->type)) {
        if (!held_by_caller(m, self_id(m->type)))
            return EPERM;
        *depth = m->count;
        if (m->type & ROBUST) {
            /* Released without pthread_mutex_consistent: unrecoverable,
             * as an unlock makes it (POSIX; glibc's wait too), so the
             * take-back gives ENOTRECOVERABLE, and so does every other
             * lock meanwhile. It used to be released as healthy: another
             * thread's lock returned 0 on the inconsistent state. */
            if (m->count & INCONSISTENT)
                return let_go(m);
            cap__robust_forget(m);
        }
        set_owner(m, NOBODY, 0);
    }
    return release(m);
}

int cap__mutex_reacquire_after_wait(cap_mutex_t *m, uint32_t depth)
{
    if (!(m->type & ROBUST)) {
        if (tracks_owner(m->type))
            acquire(m, CLOCK_REALTIME, NULL, self_id(m->type), depth);
        else
            acquire(m, CLOCK_REALTIME, NULL, NOBODY, 0);
        return 0;
    }
    /* A note: without it the thread's end would not be seen, and the
     * condition wait has no error to give for a full table; retried. */
    while (cap__robust_note(m) != 0)
        cap_sleep_ns(1000000);
    if ((m->type & SHARED) && !try_acquire(m))
        acquire_robust_shared(m, NULL);
    else if (!(m->type & SHARED))
        acquire(m, CLOCK_REALTIME, NULL, NOBODY, 0);
    return robust_taken(m, self_id(m->type), depth, 0);
}

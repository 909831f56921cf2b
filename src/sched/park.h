/* SPDX-License-Identifier: MIT */
/*
 * park/unpark: the single seam through which every user thread blocks.
 * Join, sleep, yield, every sync primitive and every I/O wait go through
 * here, so the blocking graph and every scheduling policy see every
 * transition in one place.
 *
 * Protocol (the same idea as Go's gopark):
 *   1. The parker publishes itself in some wait structure while holding
 *      that structure's lock.
 *   2. It calls cap__park(..., unlock, arg). The switch to the worker's
 *      scheduler context happens first; unlock(arg) then runs there and
 *      releases the lock. A waker can therefore only find the thread once
 *      its registers are saved: no waker ever sees a half-parked thread.
 *   3. A waker (any worker, or a foreign kernel thread) removes the thread
 *      from the structure under the lock and calls cap__unpark().
 *
 * Every park has a deadline. The thread's wait token decides races between
 * a waker and the timer: whoever moves it from WAITING first wins and
 * makes the thread runnable; the loser's cap__unpark returns false and the
 * waker must pass the wake-up on to another waiter if it has one.
 *
 * Cancellation points (added with issue 3, see src/sync/cancel.h): a park
 * made through cap__park_cancellable or cap__wait_on_cancellable publishes
 * the token WAITING_CANCELLABLE instead of WAITING. cap_thread_cancel may
 * claim exactly such a token without holding the wait structure's lock,
 * because a claimed thread always unlinks itself under that lock before it
 * acts (as after a timeout), and no other park can be mistaken for one: a
 * mutex or join wait that is not a cancellation point is never interrupted.
 * A cancel racing a park is never lost: the canceller stores the request
 * and then tries the claim; the scheduler stores the token and then looks
 * for a request (both seq_cst, Dekker), so at least one sees the other.
 *
 * Signals sent to a thread (io/sigdirect.h): POSIX wants the handler of a
 * signal sent to a thread that waits for a mutex, a condition variable or
 * a join to run while it waits, after which the wait goes on (or, for a
 * condition variable, may return 0). Those waits are address waits
 * (cap__wait_on, which any caller already re-checks after a return of 0)
 * or a join, and both unlink themselves after any unexpected end of the
 * park, as after a timeout; so they publish their token with
 * CAP__WAIT_SIGNALLABLE, and the sender claims such a token without any
 * lock, as a canceller does (cap__sig_wake_claim). The woken wait sees
 * CAP__WAKE_SIGNAL, unlinks itself, delivers the thread's pending signals
 * with no record of its own linked, and waits again. The same Dekker pair
 * as for cancellation keeps a send racing a park from being missed: the
 * sender records the signal and then tries the claim; the scheduler
 * publishes the token and then looks at the thread's pending set.
 */
#ifndef CAP_SCHED_PARK_H
#define CAP_SCHED_PARK_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct cap__thread;

enum cap__park_reason {
    CAP__PARK_NONE = 0,
    CAP__PARK_YIELD,
    CAP__PARK_SLEEP,
    CAP__PARK_JOIN,
    CAP__PARK_ONCE,
    CAP__PARK_MUTEX,
    CAP__PARK_COND,
    CAP__PARK_RWLOCK,
    CAP__PARK_SEM,
    CAP__PARK_BARRIER,
    CAP__PARK_IO_READ,
    CAP__PARK_IO_WRITE,
    CAP__PARK_IO_DISK,
    CAP__PARK_OFFLOAD,
    CAP__PARK_EXITED_MAIN, /* main() called cap_thread_exit and waits for the rest */
    CAP__PARK_WAIT,        /* a generic address wait (cap__wait_on) */
};

/* Human-readable name of a reason ("mutex", "sleep", ...). */
const char *cap__park_reason_name(enum cap__park_reason r);

enum {
    CAP__WAIT_IDLE = 0, /* not parked, or parked but not yet switched out */
    CAP__WAIT_WAITING,  /* parked and switched out; wakers may claim it */
    CAP__WAIT_CLAIMED,  /* a waker or the timer won; it is being made runnable */
    CAP__WAIT_WAITING_CANCELLABLE, /* WAITING, at a cancellation point */
    /* Added to either WAITING value: a signal sent to the thread may end
     * the park (below, cap__sig_wake_claim). Every waiting value has bit 0
     * set; IDLE and CLAIMED do not. */
    CAP__WAIT_SIGNALLABLE = 4,
};

/* wake_result of a park ended by a signal sent to the thread. */
enum { CAP__WAKE_SIGNAL = EINTR };

/* Releases the wait structure's lock; runs on the scheduler context after
 * the switch. Returning false cancels the park: the thread resumes at
 * once with result EAGAIN (use when the condition changed meanwhile). */
typedef bool (*cap__unlock_fn)(void *arg);

/*
 * Parks the calling user thread until cap__unpark or the absolute
 * CLOCK_MONOTONIC deadline (CAP__FOREVER: none). unlock may be NULL.
 * Returns 0 when woken, ETIMEDOUT when the deadline passed first, EAGAIN
 * when unlock cancelled the park. Must run on a user thread.
 */
int cap__park(enum cap__park_reason reason, const void *obj, uint64_t deadline,
              cap__unlock_fn unlock, void *arg);

/*
 * Room in the timer heaps. A park with a deadline arms the thread's timer
 * on its worker's heap, and a failure there would have nowhere to go (the
 * thread is already in its wait structure). So room is reserved ahead, in
 * cap_thread_create: each live thread has one timer, so every heap with
 * room for every live thread never grows in park. Returns 0, or EAGAIN
 * when a heap cannot grow (creation then fails with EAGAIN).
 */
int cap__park_reserve_slow(long nthreads);
extern __attribute__((visibility("hidden"))) _Atomic long cap__park_reserved;
static inline int cap__park_reserve(long nthreads)
{
    if (nthreads <= atomic_load_explicit(&cap__park_reserved, memory_order_relaxed))
        return 0;
    return cap__park_reserve_slow(nthreads);
}

/* Makes a parked thread runnable. False if it was not waiting (the timer
 * or another waker won). Callable from any kernel thread, but only while
 * holding the lock of the wait structure the thread was found in. */
bool cap__unpark(struct cap__thread *t);

/* Moves t's token from either WAITING state to CLAIMED; false if it was
 * not waiting. The one claim used by unpark, the timer and finish_switch. */
bool cap__wait_claim(struct cap__thread *t);

/*
 * Cancellation points. Same as cap__park / cap__wait_on, but while
 * cancellation is enabled a cancel request ends the wait with ECANCELED
 * (also at once, without parking, if one is already pending; unlock(arg)
 * has then been called). The caller must then unlink itself from its wait
 * structure under its lock, as after ETIMEDOUT (cap__wait_on does this
 * itself), and call cap__cancel_act() (src/sync/cancel.h), or return
 * normally if it decides the wait had completed anyway.
 */
int cap__park_cancellable(enum cap__park_reason reason, const void *obj, uint64_t deadline,
                          cap__unlock_fn unlock, void *arg);
struct cap__addr_waiter;
/* w non-NULL: through cap__wait_on_intr(w, ...) (addr is then w->addr). */
int cap__wait_on_cancellable(const _Atomic uint32_t *addr, uint32_t expected,
                             uint64_t deadline, enum cap__park_reason reason,
                             struct cap__addr_waiter *w);
/* cap__wait_on_cancellable's wait on a kernel thread the library does
 * not run (w NULL): a cancellation point of glibc's, where glibc's
 * pthread_cancel acts by unwinding the thread (sched/waitaddr.c). */
int cap__wait_foreign_cancellable(const _Atomic uint32_t *addr, uint32_t expected,
                                  uint64_t deadline);
/* Scheduler side of the Dekker pair: called by finish_switch after it
 * published WAITING_CANCELLABLE and released the wait structure's lock.
 * True if it claimed t for a pending cancel (t must then be requeued). */
bool cap__cancel_recheck(struct cap__thread *t);
/* Canceller side: claims t if it is parked at a cancellation point; the
 * caller then makes it runnable. Callable from any kernel thread. */
bool cap__cancel_claim(struct cap__thread *t);

/* Claims t if its park is signallable, for a signal sent to it (the
 * caller then makes it runnable; the park returns CAP__WAKE_SIGNAL).
 * Callable from any kernel thread. */
bool cap__sig_wake_claim(struct cap__thread *t);
/* Scheduler side, after finish_switch published a signallable token and
 * released the wait structure's lock: true if it claimed t because a
 * signal its mask lets through is pending (t must then be requeued). */
bool cap__sig_wake_recheck(struct cap__thread *t);

/* cap__current(), the calling user thread, is in sched/worker.h (inline:
 * it is on every intercepted call and every park). */

/*
 * Address waits, a user-level futex built on park: the primitive that
 * sync objects are built from (like the kernel futex under musl's
 * pthreads). Wait queues live in a hashed bucket table, so a sync object
 * needs no memory beyond its own word.
 */
/* Parks while *addr == expected. Returns 0 when woken, EAGAIN when *addr
 * differed on entry, ETIMEDOUT at the deadline. Like a futex, a return of
 * 0 may be spurious: callers re-check their condition in a loop. On a
 * kernel thread the library does not run (which cannot park), it sleeps
 * in the kernel on the word (futex; a signal there returns EAGAIN);
 * cap__wake_on wakes such sleepers too. */
int cap__wait_on(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                 enum cap__park_reason reason);
/* cap__wait_on for a futex wait with a bitset (syscall()'s
 * FUTEX_WAIT_BITSET, intercept/syscall.c; bits nonzero): woken only by a
 * cap__wake_on_bits whose bits share one with them, or by any other
 * wake-up of addr (cap__wake_on, a deferred wake, the kernel's requeue
 * and wake-op do not look at bits either). */
int cap__wait_on_bits(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                      enum cap__park_reason reason, uint32_t bits);
/* (A signal sent to the thread ends such a wait too: its handler runs
 * with nothing linked and the wait returns 0, see above.) */
/* The record of one address wait. cap__wait_on keeps it on its own
 * stack; an interruptible wait (below) keeps it in the caller's frame. */
typedef struct cap__addr_waiter {
    struct cap__addr_waiter *next, *prev; /* [bucket lock] */
    const _Atomic uint32_t *addr;
    struct cap__thread *thread;
    bool linked;                          /* [bucket lock] */
    uint32_t bits;                        /* a futex bitset (cap__wait_on_bits);
                                             0: any wake-up ends it */
    const _Atomic int *intr;              /* interruptible: nonzero = interrupted,
                                             or &cap__addr_unregistered (below) */
} cap__addr_waiter;
/* As cap__wait_on(w->addr, ...), through the caller's record w (addr and
 * intr set, linked false; reused across calls of one wait), and EINTR
 * without parking once *w->intr is nonzero: checked under the bucket lock
 * before each park. cap__wait_interrupt(w) is the matching interrupt
 * callback for io/sigintr.h (w->intr is then the waiter's sig): it wakes
 * the thread if it is parked on w, under the bucket lock, and always
 * takes the delivery (a wake-up to go on, *w->intr 0, only if it found
 * the thread parked). The caller checks *w->intr itself after a wake-up. */
int cap__wait_on_intr(cap__addr_waiter *w, uint32_t expected, uint64_t deadline,
                      enum cap__park_reason reason);
bool cap__wait_interrupt(void *w);
/* Before the program's first signal handler (io/sigintr.h,
 * cap__sig_handled) an interruptible wait need not enter the signal
 * registry, as nothing can interrupt it: it parks through its record with
 * w->intr = &cap__addr_unregistered (one test on the wait's path for
 * both kinds of record). Such a wait returns 0 at once,
 * without parking, once it finds cap__sig_handled set under the bucket
 * lock, and cap__wait_rewake_unregistered, the first handler's sweep
 * (called after setting the flag), wakes every one that is parked
 * (spuriously: it returns 0). Either way its caller re-decides and
 * enters the registry before its next park. */
extern __attribute__((visibility("hidden"))) const _Atomic int cap__addr_unregistered;
void cap__wait_rewake_unregistered(void);
/* In a fork's child: every address wait was a lost thread's, and a bucket
 * lock may have been held by one (e.g. mid-sweep): all reset. */
void cap__wait_forked(void);
/* Wakes up to n threads waiting on addr (user threads first, then kernel
 * threads asleep on it); returns how many it woke. */
int cap__wake_on(const _Atomic uint32_t *addr, int n);
/* cap__wake_on for FUTEX_WAKE_BITSET: only waiters without bits, or whose
 * bits share one with bits (the kernel threads asleep on addr too). */
int cap__wake_on_bits(const _Atomic uint32_t *addr, int n, uint32_t bits);

/* From a signal handler (util/sigctx.h), where the locks of a wake-up may
 * be held by the interrupted code: async-signal-safe, takes no lock, only
 * marks addr's bucket. cap__run_deferred_wakes, called by the signal
 * dispatch that runs after every handler (io/sigintr.c), then wakes every
 * thread waiting in a marked bucket: the waiters of addr and, spuriously,
 * any other address hashed there (a return of 0 may be spurious). */
void cap__wake_on_deferred(const _Atomic uint32_t *addr);
void cap__run_deferred_wakes(void);

#endif /* CAP_SCHED_PARK_H */

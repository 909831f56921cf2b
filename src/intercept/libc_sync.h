/* SPDX-License-Identifier: MIT */
/*
 * glibc's own synchronization objects on user threads: shared by the
 * wrappers of pthread_mutex_* (libc_mutex.c), pthread_cond_* and
 * pthread_once (libc_cond.c), sem_* (libc_sem.c), pthread_rwlock_* and
 * pthread_spin_* (libc_rwlock.c), pthread_barrier_* (libc_barrier.c), and
 * C11's mtx_* and cnd_* (glibc makes them of the same objects, through
 * its internal names: they are wrapped in libc_mutex.c and libc_cond.c).
 *
 * Code built without <capriccio/pthread.h> (a third-party library, a C++
 * standard library) calls glibc's names with glibc's objects. glibc's
 * waits sleep the kernel thread: a user thread that waits there for a
 * lock another user thread of the same worker holds, while that holder
 * is parked (in a read, say), blocks the worker the holder needs to run
 * on: a deadlock. The wrappers make a user thread park instead.
 *
 * The objects keep glibc's layout (public in glibc's headers, and shared
 * with threads the library does not run, which call glibc's code through
 * the same wrappers: they forward to it), with two exceptions documented
 * in libc_cond.c and libc_barrier.c: condition variables, once controls
 * and barriers are entirely ours, for every thread.
 *
 * Wake-ups (mutexes and rwlocks; semaphores count their waiters in the
 * object itself, libc_sem.c): a user thread that found an object busy
 * parks on one of its words (an address wait, sched/park.h) after
 * counting itself in cap__libc_parked. Every release made through a wrapper, on any thread,
 * changes the object first and then, if the count is not zero, wakes the
 * address's waiters (cap__libc_wake). The count is raised before the
 * waiter's compare of the word and read after the release's change (both
 * seq_cst): a releaser that reads 0 changed the word before the waiter
 * compared it, and the waiter does not park.
 */
#ifndef CAP_INTERCEPT_LIBC_SYNC_H
#define CAP_INTERCEPT_LIBC_SYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "thread/thread.h"

/* User threads inside a wrapper's wait (any object). */
extern __attribute__((visibility("hidden"))) atomic_long cap__libc_parked;

/* Wakes up to n user threads parked on word, if any thread is parked in
 * a wrapper at all. Called after the release changed the object. */
void cap__libc_wake(const void *word, int n);

/* Parks the calling user thread while *word == expected, counted in
 * cap__libc_parked; as cap__sync_wait (0 maybe spurious, EAGAIN,
 * ETIMEDOUT; not a cancellation point). */
int cap__libc_wait(const void *word, uint32_t expected, cap__timeout *t,
                   enum cap__park_reason reason);

/* A wait that may not be woken by a wrapper (the object may change
 * inside glibc's own code) waits in slices: t is a CLOCK_MONOTONIC
 * timeout *slice from now, or user's (non-NULL) if that comes first;
 * *slice doubles up to CAP__LIBC_SLICE_MAX_NS. Returns the one to wait
 * with: the caller's timeout has passed only if ETIMEDOUT came with it. */
enum { CAP__LIBC_SLICE_MIN_NS = 1000000, CAP__LIBC_SLICE_MAX_NS = 16000000 };
cap__timeout *cap__libc_slice(cap__timeout *t, uint64_t *slice, cap__timeout *user);

/* The calling user thread's holder id, recorded where glibc records a
 * kernel thread's id (a mutex's __owner, a rwlock's __cur_writer):
 * -(slot + 1), unique among live user threads and never a kernel
 * thread's id. */
static inline int cap__libc_holder_id(void)
{
    return -(int)cap__current()->slot - 1;
}

/* The waits of a retry loop that parks between tries of glibc's call
 * (rwlocks, kept mutexes): in slices (above), with the caller's timeout
 * (clock NULL: none; made at the first wait, as glibc checks it only
 * when the call would wait). Start with cap__libc_retry_init. */
struct cap__libc_retry {
    const clockid_t *clock;
    const struct timespec *abs;
    cap__timeout to, *tp;
    uint64_t slice;
};

static inline void cap__libc_retry_init(struct cap__libc_retry *r, const clockid_t *clock,
                                        const struct timespec *abs)
{
    r->clock = clock;
    r->abs = abs;
    r->tp = NULL;
    r->slice = CAP__LIBC_SLICE_MIN_NS;
}

/* One wait while *word == seen: 0 to try again, ETIMEDOUT once the
 * caller's timeout passed, EINVAL for a malformed one. */
int cap__libc_retry_wait(struct cap__libc_retry *r, const void *word, uint32_t seen,
                         enum cap__park_reason reason);

/* C11's result for an error number, as glibc maps them (mtx_*, cnd_*). */
int cap__libc_thrd_result(int rc);

/* For condition waits on a glibc mutex (libc_cond.c). */
extern const cap__cond_mutex cap__libc_mutex_ops;
/* Around glibc's own condition wait (a process-shared condition variable,
 * libc_cond.c), which releases and retakes m itself and checks glibc's
 * holder id, the kernel thread's: lend records the calling kernel thread
 * as m's holder if the calling user thread holds m (true then), reclaim
 * records the user thread again once glibc's wait returned. */
bool cap__libc_mutex_lend(pthread_mutex_t *m);
void cap__libc_mutex_reclaim(pthread_mutex_t *m);

#endif /* CAP_INTERCEPT_LIBC_SYNC_H */

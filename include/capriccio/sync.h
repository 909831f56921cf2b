/* SPDX-License-Identifier: MIT */
/*
 * Synchronization primitives: mutex, condition variable, read-write lock,
 * counting semaphore, barrier and spin lock, with their attribute objects.
 * Included by <capriccio.h>; cancellation is in <capriccio/cancel.h>.
 *
 * Every object is caller-allocated with a public size and has a static
 * initializer; the fields are not part of the API. Every function mirrors
 * its pthread (or, for semaphores, sem_*) counterpart and returns 0 or a
 * positive error number exactly as POSIX specifies for it; semaphores too
 * (the pthread compatibility header turns those into -1 and errno).
 *
 * All waiting parks the user thread, never its worker. An uncontended
 * lock and unlock is one atomic instruction each and no system call.
 * Timed functions take an absolute time on CLOCK_REALTIME, as POSIX says
 * (condition variables: the clock chosen by their attribute; the *clock*
 * variants: the clock passed). Callable from kernel threads the library
 * does not run too, which then wait by yielding their CPU.
 *
 * Process-shared objects (CAP_PROCESS_SHARED, in memory the processes
 * share) work between processes that use this library; their waits are
 * kernel futex waits made on the offload pool, so each waiting user
 * thread holds a pool thread (README, Limits). Not supported, rejected
 * with the POSIX error: priority-inheritance and -protection mutexes
 * (ENOTSUP), robust mutexes (ENOTSUP). docs/pthread-compat.md has the
 * whole list.
 */
#ifndef CAPRICCIO_SYNC_H
#define CAPRICCIO_SYNC_H

#include <stdint.h>
#include <time.h>

#include "../capriccio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Process-shared attribute values. */
#define CAP_PROCESS_PRIVATE 0
#define CAP_PROCESS_SHARED 1

/* ---- mutex ------------------------------------------------------------ */

#define CAP_MUTEX_NORMAL 0     /* relock deadlocks; unlock by a non-owner undefined */
#define CAP_MUTEX_RECURSIVE 1  /* the owner may relock; as many unlocks release */
#define CAP_MUTEX_ERRORCHECK 2 /* relock: EDEADLK; unlock by a non-owner: EPERM */
#define CAP_MUTEX_DEFAULT CAP_MUTEX_NORMAL

#define CAP_PRIO_NONE 0    /* mutex protocols; PROTECT is not supported */
#define CAP_PRIO_INHERIT 1
#define CAP_PRIO_PROTECT 2

#define CAP_MUTEX_STALLED 0 /* robustness */
#define CAP_MUTEX_ROBUST 1

typedef struct cap_mutex {
    uint32_t state; /* 0 free, 1 locked, 2 locked and maybe waited for; flags 4
                       (a waiter is starving) and 8 (handed off to the waiters)
                       only with 2: see src/sync/mutex.c */
    int32_t type;   /* the kind, and a process-shared flag (src/sync/mutex.c) */
    uint32_t count; /* recursion depth (RECURSIVE) */
    uint32_t reserved; /* the fork generation of flag 4; process-shared: the
                          owner's slot generation (src/sync/mutex.c) */
    uint64_t owner; /* holder (RECURSIVE, ERRORCHECK), 0 if none */
} cap_mutex_t;

#define CAP_MUTEX_INITIALIZER { 0, CAP_MUTEX_NORMAL, 0, 0, 0 }
#define CAP_MUTEX_RECURSIVE_INITIALIZER { 0, CAP_MUTEX_RECURSIVE, 0, 0, 0 }
#define CAP_MUTEX_ERRORCHECK_INITIALIZER { 0, CAP_MUTEX_ERRORCHECK, 0, 0, 0 }

typedef struct cap_mutexattr {
    int32_t type, pshared, protocol, robust, prioceiling;
} cap_mutexattr_t;

int cap_mutexattr_init(cap_mutexattr_t *attr);
int cap_mutexattr_destroy(cap_mutexattr_t *attr);
int cap_mutexattr_settype(cap_mutexattr_t *attr, int type);
int cap_mutexattr_gettype(const cap_mutexattr_t *attr, int *type);
/* CAP_PROCESS_PRIVATE (default) or CAP_PROCESS_SHARED; else EINVAL. */
int cap_mutexattr_setpshared(cap_mutexattr_t *attr, int pshared);
int cap_mutexattr_getpshared(const cap_mutexattr_t *attr, int *pshared);
/* CAP_PRIO_PROTECT: ENOTSUP. CAP_PRIO_INHERIT is accepted and has no
 * effect: all user threads have one priority, so none is ever raised. */
int cap_mutexattr_setprotocol(cap_mutexattr_t *attr, int protocol);
int cap_mutexattr_getprotocol(const cap_mutexattr_t *attr, int *protocol);
/* Stored and reported back; it has no effect, as PRIO_PROTECT is refused. */
int cap_mutexattr_setprioceiling(cap_mutexattr_t *attr, int prioceiling);
int cap_mutexattr_getprioceiling(const cap_mutexattr_t *attr, int *prioceiling);
/* CAP_MUTEX_ROBUST: a holder that ends holding the mutex (a user thread
 * that exits; for a process-shared one, its process) leaves it to the next
 * locker, told EOWNERDEAD; see cap_mutex_consistent. Threads the library
 * did not make are not seen to end. */
int cap_mutexattr_setrobust(cap_mutexattr_t *attr, int robust);
int cap_mutexattr_getrobust(const cap_mutexattr_t *attr, int *robust);

/* attr may be NULL (a NORMAL mutex). */
int cap_mutex_init(cap_mutex_t *m, const cap_mutexattr_t *attr);
/* EBUSY while locked. */
int cap_mutex_destroy(cap_mutex_t *m);
/* ERRORCHECK: EDEADLK on relock. RECURSIVE: EAGAIN past 2^32-1 levels
 * (robust: 2^31-1). Robust: EOWNERDEAD, ENOTRECOVERABLE, and EAGAIN when
 * 4,096 robust mutexes are held at once (README Limits). */
int cap_mutex_lock(cap_mutex_t *m);
/* EBUSY when held, also by the caller (except RECURSIVE). */
int cap_mutex_trylock(cap_mutex_t *m);
/* As lock, with ETIMEDOUT once CLOCK_REALTIME reaches abstime; EINVAL on
 * a malformed abstime when the mutex is not free. */
int cap_mutex_timedlock(cap_mutex_t *m, const struct timespec *abstime);
/* Same on CLOCK_REALTIME or CLOCK_MONOTONIC (others: EINVAL). */
int cap_mutex_clocklock(cap_mutex_t *m, clockid_t clock, const struct timespec *abstime);
/* EPERM if RECURSIVE or ERRORCHECK and the caller is not the owner, or if
 * the mutex is not locked. */
int cap_mutex_unlock(cap_mutex_t *m);
/* A robust mutex the caller took with EOWNERDEAD is usable again; EINVAL
 * if m is not robust, not held by the caller or not in that state. Unlocked
 * without it, m fails every later lock with ENOTRECOVERABLE. */
int cap_mutex_consistent(cap_mutex_t *m);

/* ---- condition variable ---------------------------------------------- */

typedef struct cap_cond {
    uint32_t seq;   /* bumped by every signal and broadcast */
    uint32_t refs;  /* waiters inside a wait call, plus a destroying flag */
    int32_t clock;  /* clockid_t for timed waits, and a process-shared flag */
    uint32_t sleepers; /* waiters that may be parked on seq and not yet woken */
    uint32_t gen;   /* the fork generation of refs and sleepers (src/sync/cond.c) */
} cap_cond_t;

#define CAP_COND_INITIALIZER { 0, 0, CLOCK_REALTIME, 0, 0 }

typedef struct cap_condattr {
    int32_t pshared, clock;
} cap_condattr_t;

int cap_condattr_init(cap_condattr_t *attr);
int cap_condattr_destroy(cap_condattr_t *attr);
/* CAP_PROCESS_PRIVATE (default) or CAP_PROCESS_SHARED; else EINVAL. */
int cap_condattr_setpshared(cap_condattr_t *attr, int pshared);
int cap_condattr_getpshared(const cap_condattr_t *attr, int *pshared);
/* CLOCK_REALTIME (default) or CLOCK_MONOTONIC; others EINVAL. */
int cap_condattr_setclock(cap_condattr_t *attr, clockid_t clock);
int cap_condattr_getclock(const cap_condattr_t *attr, clockid_t *clock);

int cap_cond_init(cap_cond_t *c, const cap_condattr_t *attr);
/* Safe as soon as no thread is blocked, even if threads woken by a
 * broadcast have not returned yet: it waits for them to stop touching c.
 * With threads still blocked (undefined in POSIX) it never returns. */
int cap_cond_destroy(cap_cond_t *c);
/* Wakes at least one blocked thread, if any. */
int cap_cond_signal(cap_cond_t *c);
/* Wakes every blocked thread. */
int cap_cond_broadcast(cap_cond_t *c);
/* A cancellation point. The caller must hold m; a RECURSIVE mutex is
 * released however deep and given back at the same depth. EPERM if m is
 * RECURSIVE or ERRORCHECK and not held by the caller. As with pthreads,
 * wake-ups may be spurious: wait in a loop on your predicate. */
int cap_cond_wait(cap_cond_t *c, cap_mutex_t *m);
/* ETIMEDOUT once the cond's clock reaches abstime (m is then held again);
 * EINVAL on a malformed abstime. */
int cap_cond_timedwait(cap_cond_t *c, cap_mutex_t *m, const struct timespec *abstime);
/* Same with the clock given (CLOCK_REALTIME or CLOCK_MONOTONIC). */
int cap_cond_clockwait(cap_cond_t *c, cap_mutex_t *m, clockid_t clock,
                       const struct timespec *abstime);

/* ---- read-write lock -------------------------------------------------- */

/* Kinds. PREFER_WRITER (the default): once a writer waits, new readers
 * wait behind it, so writers never starve; a thread that takes a read
 * lock it already holds while a writer waits deadlocks, as with glibc's
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP. PREFER_READER: readers
 * join as long as no writer holds the lock (recursive reads are safe,
 * writers can starve). */
#define CAP_RWLOCK_PREFER_WRITER 0
#define CAP_RWLOCK_PREFER_READER 1

typedef struct cap_rwlock {
    uint32_t state;  /* write-held bit, waiters bit, reader count */
    uint32_t guard;  /* spin lock for the slow paths */
    uint32_t rwait;  /* [guard] readers waiting */
    uint32_t wwait;  /* [guard] writers waiting */
    uint32_t rseq;   /* readers park on it */
    uint32_t wseq;   /* writers park on it */
    int32_t kind;    /* the kind, and a process-shared flag */
    uint32_t reserved; /* [guard] the fork generation of the counts;
                          process-shared: the writer's slot generation
                          (src/sync/rwlock.c) */
    uint64_t writer; /* write holder, for EDEADLK and EPERM */
} cap_rwlock_t;

#define CAP_RWLOCK_INITIALIZER { 0, 0, 0, 0, 0, 0, CAP_RWLOCK_PREFER_WRITER, 0, 0 }
#define CAP_RWLOCK_PREFER_READER_INITIALIZER \
    { 0, 0, 0, 0, 0, 0, CAP_RWLOCK_PREFER_READER, 0, 0 }

typedef struct cap_rwlockattr {
    int32_t pshared, kind;
} cap_rwlockattr_t;

int cap_rwlockattr_init(cap_rwlockattr_t *attr);
int cap_rwlockattr_destroy(cap_rwlockattr_t *attr);
/* CAP_PROCESS_PRIVATE (default) or CAP_PROCESS_SHARED; else EINVAL. */
int cap_rwlockattr_setpshared(cap_rwlockattr_t *attr, int pshared);
int cap_rwlockattr_getpshared(const cap_rwlockattr_t *attr, int *pshared);
int cap_rwlockattr_setkind(cap_rwlockattr_t *attr, int kind);
int cap_rwlockattr_getkind(const cap_rwlockattr_t *attr, int *kind);

int cap_rwlock_init(cap_rwlock_t *rw, const cap_rwlockattr_t *attr);
/* EBUSY while held or waited for. */
int cap_rwlock_destroy(cap_rwlock_t *rw);
/* EDEADLK if the caller holds it for writing. EAGAIN past 2^29-1 readers. */
int cap_rwlock_rdlock(cap_rwlock_t *rw);
/* EBUSY if a writer holds it (or, PREFER_WRITER, waits for it). */
int cap_rwlock_tryrdlock(cap_rwlock_t *rw);
int cap_rwlock_timedrdlock(cap_rwlock_t *rw, const struct timespec *abstime);
int cap_rwlock_clockrdlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abstime);
/* EDEADLK if the caller holds it for writing. */
int cap_rwlock_wrlock(cap_rwlock_t *rw);
int cap_rwlock_trywrlock(cap_rwlock_t *rw);
int cap_rwlock_timedwrlock(cap_rwlock_t *rw, const struct timespec *abstime);
int cap_rwlock_clockwrlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abstime);
/* EPERM if not held, or write-held by another thread. */
int cap_rwlock_unlock(cap_rwlock_t *rw);

/* ---- semaphore -------------------------------------------------------- */

#define CAP_SEM_VALUE_MAX 2147483647 /* as glibc's SEM_VALUE_MAX */

typedef struct cap_sem {
    uint64_t state; /* low 32 bits: value; high 32: waiters, with the top
                       bit marking a process-shared one (src/sync/sem.c) */
} cap_sem_t;

#define CAP_SEM_INITIALIZER(value) { (uint64_t)(value) }

/* EINVAL if value > CAP_SEM_VALUE_MAX. pshared != 0 makes a semaphore
 * that other processes may use where it lies in memory they share
 * (MAP_SHARED, shm_open): its waits are the kernel's futex waits, made on
 * the offload pool, so a post from any process wakes them. */
int cap_sem_init(cap_sem_t *s, int pshared, unsigned value);
/* Named semaphores: glibc's sem_open (the same file in /dev/shm, the same
 * layout, so a process on NPTL may share it), returned in *sem; oflag
 * O_CREAT and O_EXCL as POSIX says (mode and value are used only with
 * O_CREAT). 0 or sem_open's error number. */
int cap_sem_open(const char *name, int oflag, unsigned mode, unsigned value, cap_sem_t **sem);
/* EINVAL if s did not come from cap_sem_open. */
int cap_sem_close(cap_sem_t *s);
int cap_sem_unlink(const char *name);
/* EBUSY while threads wait on it (a process-private one: a shared one's
 * count may hold waiters of a process that died waiting). */
int cap_sem_destroy(cap_sem_t *s);
/* A cancellation point. */
int cap_sem_wait(cap_sem_t *s);
/* EAGAIN when the value is 0. */
int cap_sem_trywait(cap_sem_t *s);
/* A cancellation point; ETIMEDOUT once CLOCK_REALTIME reaches abstime;
 * EINVAL on a malformed abstime when it would have to wait. */
int cap_sem_timedwait(cap_sem_t *s, const struct timespec *abstime);
int cap_sem_clockwait(cap_sem_t *s, clockid_t clock, const struct timespec *abstime);
/* EOVERFLOW at CAP_SEM_VALUE_MAX. */
int cap_sem_post(cap_sem_t *s);
/* The value (never negative: waiters are not reported). */
int cap_sem_getvalue(cap_sem_t *s, int *value);

/* ---- barrier ---------------------------------------------------------- */

#define CAP_BARRIER_SERIAL_THREAD (-1)

typedef struct cap_barrier {
    uint32_t lock;    /* spin lock over arrived and round */
    uint32_t count;   /* threads per round, and a process-shared flag */
    uint32_t arrived; /* in the current round */
    uint32_t round;   /* bumped when a round completes; waiters park on it */
    uint32_t refs;    /* threads inside wait, plus a destroying flag */
    uint32_t gen;     /* [lock] the fork generation of refs (src/sync/barrier.c) */
} cap_barrier_t;

typedef struct cap_barrierattr {
    int32_t pshared;
} cap_barrierattr_t;

int cap_barrierattr_init(cap_barrierattr_t *attr);
int cap_barrierattr_destroy(cap_barrierattr_t *attr);
/* CAP_PROCESS_PRIVATE (default) or CAP_PROCESS_SHARED; else EINVAL. */
int cap_barrierattr_setpshared(cap_barrierattr_t *attr, int pshared);
int cap_barrierattr_getpshared(const cap_barrierattr_t *attr, int *pshared);

/* EINVAL if count is 0. */
int cap_barrier_init(cap_barrier_t *b, const cap_barrierattr_t *attr, unsigned count);
/* EBUSY while a round is incomplete; waits for threads still leaving the
 * last round to stop touching b. */
int cap_barrier_destroy(cap_barrier_t *b);
/* Returns CAP_BARRIER_SERIAL_THREAD to exactly one thread of each round
 * and 0 to the others. Not a cancellation point. */
int cap_barrier_wait(cap_barrier_t *b);

/* ---- spin lock -------------------------------------------------------- */

/* A spin lock for very short critical sections. Waiting spins briefly
 * (only with more than one worker: with one, the holder cannot run while
 * we spin), then yields, then parks, so a waiter never holds its worker. */
typedef struct cap_spin {
    uint32_t state; /* 0 free, 1 held, 2 held and maybe waited for; and a
                       process-shared flag (src/sync/spin.c) */
} cap_spin_t;

#define CAP_SPIN_INITIALIZER { 0 }

/* pshared: CAP_PROCESS_PRIVATE or CAP_PROCESS_SHARED; else EINVAL. */
int cap_spin_init(cap_spin_t *s, int pshared);
/* EBUSY while held. */
int cap_spin_destroy(cap_spin_t *s);
int cap_spin_lock(cap_spin_t *s);
/* EBUSY when held. */
int cap_spin_trylock(cap_spin_t *s);
/* EPERM if not held. */
int cap_spin_unlock(cap_spin_t *s);

#ifdef __cplusplus
}
#endif

#include "cancel.h"

#endif /* CAPRICCIO_SYNC_H */

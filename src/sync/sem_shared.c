/* SPDX-License-Identifier: MIT */
/*
 * Process-shared semaphores' waits and wake-ups: cap_sem_init with
 * pshared, the named ones of cap_sem_open, and glibc's shared ones on
 * user threads (intercept/libc_sem.c).
 *
 * Another process posts such a semaphore with a futex wake of its value
 * word, as glibc's sem_post does, and no parked user thread of ours
 * hears that. So a waiter here waits in the kernel, as glibc's sem_wait
 * does: a FUTEX_WAIT on the value word while it reads 0, made on a
 * kernel thread of the offload pool (io/offload.c) while only the
 * calling user thread waits. The protocol is glibc's: a waiter counts
 * itself in the high half before it looks at the value, and a post that
 * finds a count wakes one kernel waiter. So processes on NPTL and on
 * this library can share one semaphore, and a post from this process
 * reaches a waiter of any of them.
 *
 * A user thread's wait on one in private anonymous memory, which only
 * this process can post, parks instead, after the same yields (sem.c,
 * parks_when_shared).
 *
 * Signals and cancellation are the pool's (cap__offload_call_until): a
 * timed wait ends with EINTR for any caught signal, an untimed one only
 * without SA_RESTART, as the kernel's futex wait restarts; both are
 * cancellation points. Each waiting user thread holds a pool thread
 * (CAP_POOL_THREADS, README Limits). A kernel thread the library does not
 * run waits in the kernel itself (shared_wait.c), where glibc's
 * pthread_cancel may unwind it: its count among the waiters goes with it
 * (this file is built with -fexceptions for that cleanup). A timed wait whose time has passed
 * and finds no unit times out on the caller's thread, as a private
 * one's does, without a trip to the pool.
 *
 * A trip through the pool costs tens of microseconds, and a program may
 * make a semaphore process-shared and still post it from its own threads
 * only (a habit, or a library's choice). So a user thread first yields
 * its worker a few times (YIELDS: cap__sem_take_yielding, which sem.c
 * calls before it chooses a park or the kernel's wait), taking a unit
 * another of its threads posts meanwhile: a ping-pong between two user
 * threads of one worker then costs switches, not pool trips (nor the
 * page-table look-up that chooses a park).
 * A handler that runs during those yields does not end the wait: the
 * same as a signal that comes just before glibc's futex wait sleeps.
 */
#include <errno.h>
#include <stdbool.h>

#include "sched/worker.h"
#include "sync/sync.h"

enum { YIELDS = 8 };

struct counted {
    _Atomic uint64_t *word;
    bool active; /* still counted among the waiters */
};

static void uncount(struct counted *c)
{
    if (c->active)
        atomic_fetch_sub(c->word, CAP__SEM_ONE_WAITER);
}

/* The wait of a kernel thread the library does not run: the one that
 * can end by unwinding (out of line, so that a user thread's wait keeps
 * its frame small: linked stacks bound it). */
static __attribute__((noinline)) long wait_foreign(_Atomic uint64_t *word, cap__timeout *to,
                                                   int how)
{
    struct counted counted __attribute__((cleanup(uncount))) = { word, true };
    long r = cap__futex_wait_pooled((_Atomic uint32_t *)(void *)word, 0, to, how);
    counted.active = false;
    return r;
}

bool cap__sem_take_yielding(_Atomic uint64_t *word)
{
    for (int i = 0; i < YIELDS; i++) {
        cap_yield();
        if (cap__sem_take(word, CAP__SEM_ONE_WAITER))
            return true;
    }
    return false;
}

int cap__sem_wait_kernel(_Atomic uint64_t *word, cap__timeout *to)
{
    int how = CAP__SHARED_CANCEL | (to != NULL ? CAP__SHARED_EINTR : 0);
    for (;;) {
        if (cap__sem_take(word, CAP__SEM_ONE_WAITER))
            return 0;
        /* A time already reached times out here, without the pool's round
         * trip (shared_wait.c), and one queued past a deadline the clock
         * moved back waits on. */
        long r = cap__current() == NULL
                     ? wait_foreign(word, to, how)
                     : cap__futex_wait_pooled((_Atomic uint32_t *)(void *)word, 0, to, how);
        if (r == 0 || r == -EAGAIN)
            continue; /* woken, or the value changed before it slept */
        /* A post that came with the timeout or the signal is taken, as a
         * woken waiter takes it before it looks at why it woke; a cancel
         * takes nothing (POSIX: the cancelled wait consumed no unit). */
        if (r != -ECANCELED && cap__sem_take(word, CAP__SEM_ONE_WAITER))
            return 0;
        atomic_fetch_sub(word, CAP__SEM_ONE_WAITER);
        return (int)-r;
    }
}

void cap__sem_wake_kernel(_Atomic uint64_t *word)
{
    cap__shared_wake((_Atomic uint32_t *)(void *)word, 1);
}

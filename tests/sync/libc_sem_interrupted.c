/* SPDX-License-Identifier: MIT */
/* Description: a user thread in glibc's sem_wait (code built with
 * <pthread.h> and <semaphore.h>, as a third-party library is) is ended by
 * a caught signal as glibc's is on Linux: sem_wait fails with EINTR when
 * the handler has no SA_RESTART and goes on waiting when it has (then a
 * post ends it); sem_timedwait and sem_clockwait fail with EINTR either
 * way. A daemon that waits in sem_wait for work and for its SIGTERM flag
 * relies on this. The first version of the wrapper went on waiting after
 * every handler (the test timed out); before the wrappers the wait slept
 * the worker, which with one worker never let the signal be sent. The
 * same for a process-shared semaphore: in .bss, where only this process
 * can post it and the wait parks (sync/sem.c), and in a MAP_SHARED
 * mapping, where the wait is the kernel's on the offload pool. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util.h"

/* The library's errno accessor (not const, unlike glibc's): the thread may
 * resume on another worker after the wait. */
int *cap_errno_location(void);

static sem_t bss_sem;
static sem_t *s; /* the one in use */
static atomic_int handled, entered, finished;
static int shared_now; /* the semaphore main() made: 0 private, 1 shared in .bss,
                          2 shared in a MAP_SHARED mapping */

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void set_handler(int flags)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = flags };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

enum { UNTIMED, TIMED, CLOCKED };

static void *waiter(void *arg)
{
    int kind = (int)(intptr_t)arg;
    atomic_store(&entered, 1);
    int rc;
    if (kind == UNTIMED) {
        rc = sem_wait(s);
    } else {
        struct timespec abs = ts_after(CLOCK_REALTIME, 60000);
        if (kind == TIMED)
            rc = sem_timedwait(s, &abs);
        else {
            abs = ts_after(CLOCK_MONOTONIC, 60000);
            rc = sem_clockwait(s, CLOCK_MONOTONIC, &abs);
        }
    }
    int result = rc == 0 ? 0 : *cap_errno_location();
    atomic_store(&finished, 1);
    return (void *)(intptr_t)result;
}

/* Starts a waiter of kind, signals it once it waits, returns its result
 * (0, or the errno of its failure); post: also post after the signal.
 * The waiter may not be parked yet when the signal comes (its worker's
 * kernel thread preempted between `entered` and the wait, on a loaded
 * machine with CAP_MIGRATE=1): a handler run before the wait does not end
 * it, as with glibc, so a wait that should end with EINTR is signalled
 * again until it does (a bounded number of rounds: a wait that never
 * ends fails the check). */
static int run(int kind, bool post)
{
    atomic_store(&entered, 0);
    atomic_store(&finished, 0);
    cap_thread_t t = spawn(waiter, (void *)(intptr_t)kind);
    while (!atomic_load(&entered))
        cap_yield();
    for (int round = 0; !atomic_load(&finished); round++) {
        if (round == 1000) /* which wait, for a failure seen once in CI */
            fprintf(stderr, "kind %d (0 untimed, 1 timed, 2 clocked), post %d, semaphore %d: "
                    "%d handlers ran, the wait goes on\n",
                    kind, post, shared_now, atomic_load(&handled));
        CHECK(round < 1000);
        int before = atomic_load(&handled);
        for (int i = 0; i < 20; i++)
            cap_yield(); /* it parks in the wait meanwhile */
        if (atomic_load(&finished))
            break; /* the last round's signal ended it (a slow return) */
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        /* (Sent as the wait returned, after `finished`: no handler runs.) */
        while (atomic_load(&handled) == before && !atomic_load(&finished))
            cap_yield();
        for (int i = 0; i < 20; i++)
            cap_yield(); /* restarted, it parks again; interrupted, it returns */
        if (post)
            break; /* a restarted wait goes on: the post ends it */
    }
    if (post)
        CHECK_EQ(sem_post(s), 0);
    return (int)(intptr_t)join(t);
}

int main(void)
{
    /* Process-private, then process-shared in private memory (a park, as
     * a private one's), then in shared memory (the kernel's wait on the
     * offload pool: src/sync/sem_shared.c). */
    for (int kind = 0; kind <= 2; kind++) {
        s = kind < 2 ? &bss_sem : shared_map(sizeof *s);
        CHECK_EQ(sem_init(s, kind != 0, 0), 0);
        shared_now = kind;
        set_handler(0);
        CHECK_EQ(run(UNTIMED, false), EINTR);
        CHECK_EQ(run(TIMED, false), EINTR);
        CHECK_EQ(run(CLOCKED, false), EINTR);
        set_handler(SA_RESTART);
        CHECK_EQ(run(UNTIMED, true), 0);
        CHECK_EQ(run(TIMED, false), EINTR);
        int v = -1;
        CHECK_EQ(sem_getvalue(s, &v), 0);
        CHECK_EQ(v, 0); /* the one post went to the restarted wait */
        CHECK_EQ(sem_destroy(s), 0);
        CHECK_EQ(sem_waiters_counted(s), 0u); /* no waiter left counted */
    }
    return 0;
}

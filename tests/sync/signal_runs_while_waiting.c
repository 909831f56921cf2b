/* SPDX-License-Identifier: MIT */
/* Description: a signal sent to a thread (pthread_kill) that waits for a
 * mutex, a condition variable, a read-write lock, a barrier, a
 * pthread_once or a join runs its handler in that thread while it still
 * waits, as POSIX says; afterwards the wait goes on and ends as it would
 * have (the mutex is still exclusive, the join still returns the value,
 * once's routine still runs once). Then a stress run: threads contending
 * a mutex and a condition variable under a stream of signals keep an
 * exact count, and every handler runs in the thread it was sent to.
 * Before, such a thread ran the handler only once its wait ended: while
 * the mutex stayed held, never. */
#include <capriccio/sync.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "util.h"

enum { POLL_MS = 1, POLL_LIMIT = 30000 };

static _Atomic int handler_runs;
static _Atomic cap_thread_t handler_in;
static atomic_int ready, acquired;

static void on_usr1(int sig)
{
    (void)sig;
    handler_in = cap_thread_self();
    atomic_fetch_add(&handler_runs, 1);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

static void wait_for(atomic_int *flag)
{
    while (!atomic_load(flag))
        cap_usleep(1000);
}

/* Sends SIGUSR1 to t, which waits (or is about to), and waits for its
 * handler: it must run there while what t waits for is still held. */
static void signal_waiter(cap_thread_t t)
{
    wait_for(&ready);
    cap_usleep(5000); /* most often parked by now; either way it must run */
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    for (int i = 0; atomic_load(&handler_runs) == 0; i++) {
        if (i == POLL_LIMIT) {
            fprintf(stderr, "the handler did not run while the thread waited\n");
            exit(1);
        }
        cap_usleep(POLL_MS * 1000);
    }
    CHECK_EQ(atomic_load(&handler_runs), 1);
    CHECK_EQ(handler_in, t);
    CHECK_EQ(atomic_load(&acquired), 0);
}

static void reset(void)
{
    atomic_store(&handler_runs, 0);
    handler_in = 0;
    atomic_store(&ready, 0);
    atomic_store(&acquired, 0);
}

/* ---- mutex ---------------------------------------------------------------- */

static cap_mutex_t mu = CAP_MUTEX_INITIALIZER;
static int inside;

static void *mutex_waiter(void *arg)
{
    (void)arg;
    atomic_store(&ready, 1);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    atomic_store(&acquired, 1);
    CHECK_EQ(inside, 0);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    return NULL;
}

static void mutex_wait(void)
{
    reset();
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    inside = 1;
    cap_thread_t t = spawn(mutex_waiter, NULL);
    signal_waiter(t);
    inside = 0;
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    join(t);
    CHECK_EQ(atomic_load(&acquired), 1);
}

/* ---- condition variable ----------------------------------------------------- */

static cap_cond_t cv = CAP_COND_INITIALIZER;
static int go;

static void *cond_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    atomic_store(&ready, 1);
    while (!go)
        CHECK_EQ(cap_cond_wait(&cv, &mu), 0); /* 0 after the handler is allowed */
    atomic_store(&acquired, 1);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    return NULL;
}

static void cond_wait(void)
{
    reset();
    go = 0;
    cap_thread_t t = spawn(cond_waiter, NULL);
    signal_waiter(t);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    go = 1;
    CHECK_EQ(cap_cond_signal(&cv), 0);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    join(t);
    CHECK_EQ(atomic_load(&acquired), 1);
}

/* ---- read-write lock -------------------------------------------------------- */

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;

static void *writer(void *arg)
{
    (void)arg;
    atomic_store(&ready, 1);
    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    atomic_store(&acquired, 1);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

static void rwlock_wait(void)
{
    reset();
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    cap_thread_t t = spawn(writer, NULL);
    signal_waiter(t);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    join(t);
    CHECK_EQ(atomic_load(&acquired), 1);
}

/* ---- barrier ---------------------------------------------------------------- */

static cap_barrier_t bar;

static void *barrier_waiter(void *arg)
{
    (void)arg;
    atomic_store(&ready, 1);
    int rc = cap_barrier_wait(&bar);
    CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
    atomic_store(&acquired, 1);
    return (void *)(intptr_t)rc;
}

static void barrier_wait(void)
{
    reset();
    CHECK_EQ(cap_barrier_init(&bar, NULL, 2), 0);
    cap_thread_t t = spawn(barrier_waiter, NULL);
    signal_waiter(t);
    int mine = cap_barrier_wait(&bar);
    int theirs = (int)(intptr_t)join(t);
    CHECK_EQ((mine == CAP_BARRIER_SERIAL_THREAD) + (theirs == CAP_BARRIER_SERIAL_THREAD), 1);
    CHECK_EQ(cap_barrier_destroy(&bar), 0);
}

/* ---- pthread_once ----------------------------------------------------------- */

static cap_once_t once = CAP_ONCE_INIT;
static cap_sem_t init_may_end;
static atomic_int init_runs, init_started;

static void init_routine(void)
{
    atomic_fetch_add(&init_runs, 1);
    atomic_store(&init_started, 1);
    CHECK_EQ(cap_sem_wait(&init_may_end), 0);
}

static void *once_caller(void *arg)
{
    if (arg != NULL) {
        wait_for(&init_started);
        atomic_store(&ready, 1);
    }
    CHECK_EQ(cap_once(&once, init_routine), 0);
    if (arg != NULL)
        atomic_store(&acquired, 1);
    return NULL;
}

static void once_wait(void)
{
    reset();
    CHECK_EQ(cap_sem_init(&init_may_end, 0, 0), 0);
    cap_thread_t first = spawn(once_caller, NULL);
    cap_thread_t second = spawn(once_caller, &once);
    signal_waiter(second);
    CHECK_EQ(cap_sem_post(&init_may_end), 0);
    join(first);
    join(second);
    CHECK_EQ(atomic_load(&init_runs), 1);
    CHECK_EQ(atomic_load(&acquired), 1);
    CHECK_EQ(cap_sem_destroy(&init_may_end), 0);
}

/* ---- join --------------------------------------------------------------------- */

static cap_sem_t target_may_end;

static void *target(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(&target_may_end), 0);
    return (void *)(intptr_t)42;
}

static void *joiner(void *arg)
{
    cap_thread_t t = *(cap_thread_t *)arg;
    atomic_store(&ready, 1);
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((intptr_t)ret, 42);
    atomic_store(&acquired, 1);
    return NULL;
}

static void join_wait(void)
{
    reset();
    CHECK_EQ(cap_sem_init(&target_may_end, 0, 0), 0);
    cap_thread_t t = spawn(target, NULL);
    cap_thread_t j = spawn(joiner, &t);
    signal_waiter(j);
    CHECK_EQ(cap_sem_post(&target_may_end), 0);
    join(j);
    CHECK_EQ(atomic_load(&acquired), 1);
    CHECK_EQ(cap_thread_join(t, NULL), ESRCH); /* joined once, by j */
    CHECK_EQ(cap_sem_destroy(&target_may_end), 0);
}

/* ---- stress ------------------------------------------------------------------- */

enum { THREADS = 16, ROUNDS = 1500 };

static cap_thread_t crowd[THREADS];
static _Atomic int crowd_runs[THREADS], stray_runs, crowd_done;
static long counter;
static int token; /* passed around under mu: whose turn it is on cv */

static void on_usr2(int sig)
{
    (void)sig;
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < THREADS; i++)
        if (crowd[i] == self) {
            atomic_fetch_add(&crowd_runs[i], 1);
            return;
        }
    atomic_fetch_add(&stray_runs, 1);
}

static void *crowd_member(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(cap_mutex_lock(&mu), 0);
        long seen = counter;
        if (r % 8 == 0)
            cap_yield(); /* others park on mu meanwhile */
        counter = seen + 1;
        if (r % 64 == 0) {
            /* A turn on cv: wait until the token is ours, hand it on. */
            while (token != me)
                CHECK_EQ(cap_cond_wait(&cv, &mu), 0);
            token = (me + 1) % THREADS;
            CHECK_EQ(cap_cond_broadcast(&cv), 0);
        }
        CHECK_EQ(cap_mutex_unlock(&mu), 0);
    }
    atomic_fetch_add(&crowd_done, 1);
    return NULL;
}

static void stress(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    counter = 0;
    token = 0;
    CHECK_EQ(cap_mutex_lock(&mu), 0); /* all spawned before anyone starts */
    for (int i = 0; i < THREADS; i++)
        crowd[i] = spawn(crowd_member, (void *)(intptr_t)i);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    long sent = 0;
    unsigned seed = 12345;
    while (atomic_load(&crowd_done) < THREADS) {
        seed = seed * 1103515245u + 12345u;
        int rc = cap_thread_kill(crowd[(seed >> 16) % THREADS], SIGUSR2);
        CHECK(rc == 0 || rc == ESRCH); /* ESRCH: it just finished */
        sent += rc == 0;
        if (sent % 4 == 0)
            cap_usleep(200);
    }
    for (int i = 0; i < THREADS; i++)
        join(crowd[i]);
    CHECK_EQ(counter, (long)THREADS * ROUNDS);
    CHECK_EQ(atomic_load(&stray_runs), 0);
    long runs = 0;
    for (int i = 0; i < THREADS; i++)
        runs += atomic_load(&crowd_runs[i]);
    CHECK_GT(runs, 0);
    CHECK_LE(runs, sent); /* two sends before a delivery make one */
}

int main(void)
{
    install();
    mutex_wait();
    cond_wait();
    rwlock_wait();
    barrier_wait();
    once_wait();
    join_wait();
    stress();
    CHECK_EQ(cap_cond_destroy(&cv), 0);
    CHECK_EQ(cap_mutex_destroy(&mu), 0);
    return 0;
}

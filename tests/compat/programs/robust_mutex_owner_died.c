/* SPDX-License-Identifier: MIT */
/* Description: robust mutexes, as POSIX
 * and glibc define them. A user thread that ends holding one (returning,
 * pthread_exit, cancelled) leaves it to the next locker, told EOWNERDEAD
 * with the mutex held, by lock, trylock or timedlock, and by a condition
 * wait taking it back; pthread_mutex_consistent makes it usable again, and
 * an unlock without it makes every later lock ENOTRECOVERABLE. Of many
 * waiters parked when the holder ends, exactly one is told. Each kind
 * (normal, recursive at depth, error-checking), and a stress where one
 * holder in five ends holding it. Misuse: consistent on a mutex that is
 * not robust, not held by the caller, or already consistent is EINVAL.
 * A mutex that is not robust stays held when its holder ends, as before.
 * In a fork's child a robust mutex the parent's other thread held stays
 * held, and the child's own threads' ends are told as usual.
 * Before, setrobust failed with ENOTSUP (APR's process mutex could not be
 * made, so httpd with two Listen lines did not start). */
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static struct timespec ts_after(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void make(pthread_mutex_t *m, int type, int robust)
{
    pthread_mutexattr_t a;
    EXPECT_EQ(pthread_mutexattr_init(&a), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&a, type), 0);
    if (robust)
        EXPECT_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    EXPECT_EQ(pthread_mutex_init(m, &a), 0);
    EXPECT_EQ(pthread_mutexattr_destroy(&a), 0);
}

static pthread_mutex_t *target;
static int depth;

/* Takes *target depth times and ends holding it. */
static void *lock_and_return(void *arg)
{
    (void)arg;
    for (int i = 0; i < depth; i++)
        EXPECT_EQ(pthread_mutex_lock(target), 0);
    return NULL;
}

static void *lock_and_exit(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_mutex_lock(target), 0);
    pthread_exit(NULL);
}

static void *lock_and_sleep(void *arg)
{
    atomic_int *in = arg;
    EXPECT_EQ(pthread_mutex_lock(target), 0);
    atomic_store(in, 1);
    for (;;)
        sleep(10); /* a cancellation point */
    return NULL;
}

static void end_holding(void *(*fn)(void *), pthread_mutex_t *m, int levels)
{
    target = m;
    depth = levels;
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, fn, NULL), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
}

static void kinds(void)
{
    static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE,
                                 PTHREAD_MUTEX_ERRORCHECK };
    for (unsigned k = 0; k < sizeof types / sizeof types[0]; k++) {
        pthread_mutex_t m;
        make(&m, types[k], 1);
        end_holding(lock_and_return, &m, types[k] == PTHREAD_MUTEX_RECURSIVE ? 3 : 1);
        EXPECT_EQ(pthread_mutex_lock(&m), EOWNERDEAD);
        if (types[k] == PTHREAD_MUTEX_ERRORCHECK)
            EXPECT_EQ(pthread_mutex_lock(&m), EDEADLK); /* held by us now */
        EXPECT_EQ(pthread_mutex_consistent(&m), 0);
        EXPECT_EQ(pthread_mutex_consistent(&m), EINVAL); /* already so */
        EXPECT_EQ(pthread_mutex_unlock(&m), 0);
        EXPECT_EQ(pthread_mutex_unlock(&m), EPERM); /* robust: the owner is known */
        EXPECT_EQ(pthread_mutex_lock(&m), 0);
        EXPECT_EQ(pthread_mutex_unlock(&m), 0);

        /* pthread_exit, then trylock; unlocked without consistent */
        end_holding(lock_and_exit, &m, 1);
        EXPECT_EQ(pthread_mutex_trylock(&m), EOWNERDEAD);
        EXPECT_EQ(pthread_mutex_unlock(&m), 0);
        EXPECT_EQ(pthread_mutex_lock(&m), ENOTRECOVERABLE);
        struct timespec at = ts_after(CLOCK_REALTIME, 10);
        EXPECT_EQ(pthread_mutex_timedlock(&m, &at), ENOTRECOVERABLE);
        EXPECT_EQ(pthread_mutex_consistent(&m), EINVAL);
        /* last: glibc 2.36's trylock says so but leaves the lock word
         * taken (it frees it only if it was the caller's before), and a
         * timedlock after it times out */
        EXPECT_EQ(pthread_mutex_trylock(&m), ENOTRECOVERABLE);
        EXPECT_EQ(pthread_mutex_destroy(&m), 0);

        /* timedlock told, and the mutex made anew by init */
        make(&m, types[k], 1);
        end_holding(lock_and_return, &m, 1);
        at = ts_after(CLOCK_REALTIME, 1000);
        EXPECT_EQ(pthread_mutex_timedlock(&m, &at), EOWNERDEAD);
        EXPECT_EQ(pthread_mutex_consistent(&m), 0);
        EXPECT_EQ(pthread_mutex_unlock(&m), 0);
        EXPECT_EQ(pthread_mutex_destroy(&m), 0);
    }
}

static void misuse(void)
{
    pthread_mutex_t plain;
    make(&plain, PTHREAD_MUTEX_ERRORCHECK, 0);
    EXPECT_EQ(pthread_mutex_lock(&plain), 0);
    EXPECT_EQ(pthread_mutex_consistent(&plain), EINVAL); /* not robust */
    EXPECT_EQ(pthread_mutex_unlock(&plain), 0);
    /* not robust: its holder's end leaves it held, as glibc does */
    end_holding(lock_and_return, &plain, 1);
    EXPECT_EQ(pthread_mutex_trylock(&plain), EBUSY);

    pthread_mutex_t m;
    make(&m, PTHREAD_MUTEX_NORMAL, 1);
    EXPECT_EQ(pthread_mutex_consistent(&m), EINVAL); /* not held */
    end_holding(lock_and_return, &m, 1);
    EXPECT_EQ(pthread_mutex_lock(&m), EOWNERDEAD);
    EXPECT_EQ(pthread_mutex_consistent(&m), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
    EXPECT_EQ(pthread_mutex_destroy(&m), 0);
}

/* Many waiters parked when the holder ends: one is told. */
enum { WAITERS = 50 };
static pthread_mutex_t crowd;
static atomic_int told, fine, crowd_in;

static void *crowd_waiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&crowd_in, 1);
    int rc = pthread_mutex_lock(&crowd);
    if (rc == EOWNERDEAD) {
        atomic_fetch_add(&told, 1);
        EXPECT_EQ(pthread_mutex_consistent(&crowd), 0);
    } else {
        EXPECT_EQ(rc, 0);
        atomic_fetch_add(&fine, 1);
    }
    EXPECT_EQ(pthread_mutex_unlock(&crowd), 0);
    return NULL;
}

static void *crowd_holder(void *arg)
{
    pthread_t *waiters = arg;
    EXPECT_EQ(pthread_mutex_lock(&crowd), 0);
    for (int i = 0; i < WAITERS; i++)
        EXPECT_EQ(pthread_create(&waiters[i], NULL, crowd_waiter, NULL), 0);
    while (atomic_load(&crowd_in) < WAITERS)
        usleep(1000);
    usleep(20000); /* they park */
    return NULL;   /* holding it */
}

static void many_waiters(void)
{
    make(&crowd, PTHREAD_MUTEX_NORMAL, 1);
    static pthread_t waiters[WAITERS];
    pthread_t h;
    EXPECT_EQ(pthread_create(&h, NULL, crowd_holder, waiters), 0);
    EXPECT_EQ(pthread_join(h, NULL), 0);
    for (int i = 0; i < WAITERS; i++)
        EXPECT_EQ(pthread_join(waiters[i], NULL), 0);
    EXPECT_EQ(atomic_load(&told), 1);
    EXPECT_EQ(atomic_load(&fine), WAITERS - 1);
    EXPECT_EQ(pthread_mutex_lock(&crowd), 0);
    EXPECT_EQ(pthread_mutex_unlock(&crowd), 0);
}

static void cancelled_holder(void)
{
    pthread_mutex_t m;
    make(&m, PTHREAD_MUTEX_ERRORCHECK, 1);
    target = &m;
    atomic_int in = 0;
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, lock_and_sleep, &in), 0);
    while (!atomic_load(&in))
        usleep(1000);
    EXPECT_EQ(pthread_cancel(t), 0);
    void *ret;
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    EXPECT_EQ(pthread_mutex_lock(&m), EOWNERDEAD);
    EXPECT_EQ(pthread_mutex_consistent(&m), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
}

/* A condition wait takes the mutex back from a holder that ended. */
static pthread_mutex_t cm;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int cwaiting;

static void *signal_and_end(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_mutex_lock(&cm), 0);
    EXPECT_EQ(pthread_cond_signal(&cv), 0);
    return NULL; /* holding it */
}

static void cond_wait_told(void)
{
    make(&cm, PTHREAD_MUTEX_NORMAL, 1);
    EXPECT_EQ(pthread_mutex_lock(&cm), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, signal_and_end, NULL), 0);
    int rc;
    do /* (a spurious wake-up would come back with the mutex as it was) */
        rc = pthread_cond_wait(&cv, &cm);
    while (rc == 0);
    EXPECT_EQ(rc, EOWNERDEAD);
    EXPECT_EQ(pthread_mutex_consistent(&cm), 0);
    EXPECT_EQ(pthread_mutex_unlock(&cm), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    (void)cwaiting;
}

/* Stress: threads take turns; one in five ends holding the mutex. */
enum { ROUNDS = 2000 };
static pthread_mutex_t sm;
static long counter;
static atomic_int deaths_told;

static void *stress_one(void *arg)
{
    long i = (long)arg;
    int rc = pthread_mutex_lock(&sm);
    if (rc == EOWNERDEAD) {
        atomic_fetch_add(&deaths_told, 1);
        EXPECT_EQ(pthread_mutex_consistent(&sm), 0);
    } else {
        EXPECT_EQ(rc, 0);
    }
    counter++;
    if (i % 5 == 4)
        return NULL; /* ends holding it */
    if (i % 3 == 0)
        sched_yield(); /* others queue up */
    EXPECT_EQ(pthread_mutex_unlock(&sm), 0);
    return NULL;
}

static void stress(void)
{
    make(&sm, PTHREAD_MUTEX_RECURSIVE, 1);
    static pthread_t t[ROUNDS];
    for (long i = 0; i < ROUNDS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, stress_one, (void *)i), 0);
    for (long i = 0; i < ROUNDS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    int rc = pthread_mutex_lock(&sm);
    int last = rc == EOWNERDEAD;
    if (rc != EOWNERDEAD)
        EXPECT_EQ(rc, 0);
    EXPECT_EQ(counter, ROUNDS);
    /* every death but possibly the last is told to the next locker */
    EXPECT_EQ(atomic_load(&deaths_told) + last, ROUNDS / 5);
    if (last)
        EXPECT_EQ(pthread_mutex_consistent(&sm), 0);
    EXPECT_EQ(pthread_mutex_unlock(&sm), 0);
}

/* A fork's child: a robust mutex the parent's other thread held stays
 * held there (that thread is not in the child, and did not end); threads
 * the child makes (perhaps in the lost thread's place) that end holding
 * robust mutexes leave those, and only those, to the next locker. */
static pthread_mutex_t kept, fresh[4];
static atomic_int kept_held, kept_release;

static void *hold_kept(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_mutex_lock(&kept), 0);
    atomic_store(&kept_held, 1);
    while (!atomic_load(&kept_release))
        usleep(1000);
    EXPECT_EQ(pthread_mutex_unlock(&kept), 0);
    return NULL;
}

static void *hold_fresh(void *arg)
{
    EXPECT_EQ(pthread_mutex_lock(arg), 0);
    return NULL; /* holding it */
}

static void fork_child_keeps_lost_holds(void)
{
    make(&kept, PTHREAD_MUTEX_NORMAL, 1);
    for (int i = 0; i < 4; i++)
        make(&fresh[i], PTHREAD_MUTEX_NORMAL, 1);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, hold_kept, NULL), 0);
    while (!atomic_load(&kept_held))
        usleep(1000);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 4; i++) {
            pthread_t c;
            EXPECT_EQ(pthread_create(&c, NULL, hold_fresh, &fresh[i]), 0);
            EXPECT_EQ(pthread_join(c, NULL), 0);
            EXPECT_EQ(pthread_mutex_trylock(&fresh[i]), EOWNERDEAD);
            EXPECT_EQ(pthread_mutex_consistent(&fresh[i]), 0);
            EXPECT_EQ(pthread_mutex_unlock(&fresh[i]), 0);
            EXPECT_EQ(pthread_mutex_trylock(&kept), EBUSY);
        }
        _exit(0);
    }
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    atomic_store(&kept_release, 1);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_mutex_lock(&kept), 0);
    EXPECT_EQ(pthread_mutex_unlock(&kept), 0);
}

int main(void)
{
    kinds();
    misuse();
    many_waiters();
    cancelled_holder();
    cond_wait_told();
    stress();
    fork_child_keeps_lost_holds();
    return 0;
}

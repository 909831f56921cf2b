/* SPDX-License-Identifier: MIT */
/* Description: the error numbers POSIX defines for the pthread and
 * semaphore calls, as glibc gives them: timed waits with a deadline
 * already past (ETIMEDOUT, a condition wait's mutex held again), a
 * malformed one where the call would wait (EINVAL), an unknown clock
 * (EINVAL); error-checking and recursive mutexes misused (EDEADLK,
 * EPERM); busy objects (EBUSY); a join of itself (EDEADLK); bad
 * attribute values (EINVAL); semaphores out of range (EINVAL,
 * EOVERFLOW), empty (EAGAIN); bad cancellation settings (EINVAL); keys
 * (a deleted key's value is not kept for a new one of that number:
 * NULL). Only behaviour POSIX defines: no misuse it leaves undefined. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>

#include "check.h"

static struct timespec past(void)
{
    struct timespec ts;
    EXPECT_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
    ts.tv_sec -= 1;
    return ts;
}

static struct timespec past_mono(void)
{
    struct timespec ts;
    EXPECT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    ts.tv_sec -= 1;
    return ts;
}

static const struct timespec malformed = { 0, 1000000000L };

static void *hold_mutex(void *arg)
{
    pthread_mutex_t *m = arg;
    EXPECT_EQ(pthread_mutex_lock(m), 0);
    return NULL; /* exits holding it: a normal mutex stays locked */
}

static void mutexes(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    struct timespec ts = past(), mono = past_mono();

    /* Free: timed locks succeed whatever the deadline. */
    EXPECT_EQ(pthread_mutex_timedlock(&m, &ts), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
    EXPECT_EQ(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);

    /* Held by another (ended) thread: busy, timed out, malformed. */
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, hold_mutex, &m), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_mutex_trylock(&m), EBUSY);
    EXPECT_EQ(pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &ts), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_timedlock(&m, &malformed), EINVAL);
    EXPECT_EQ(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &mono), EINVAL);

    /* Error checking. */
    pthread_mutexattr_t a;
    EXPECT_EQ(pthread_mutexattr_init(&a), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
    pthread_mutex_t e;
    EXPECT_EQ(pthread_mutex_init(&e, &a), 0);
    EXPECT_EQ(pthread_mutex_unlock(&e), EPERM);
    EXPECT_EQ(pthread_mutex_lock(&e), 0);
    EXPECT_EQ(pthread_mutex_lock(&e), EDEADLK);
    EXPECT_EQ(pthread_mutex_timedlock(&e, &ts), EDEADLK);
    EXPECT_EQ(pthread_mutex_trylock(&e), EBUSY);
    EXPECT_EQ(pthread_mutex_unlock(&e), 0);
    EXPECT_EQ(pthread_mutex_destroy(&e), 0);

    /* Recursive: counted, and EPERM once given back. */
    EXPECT_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
    pthread_mutex_t r;
    EXPECT_EQ(pthread_mutex_init(&r, &a), 0);
    EXPECT_EQ(pthread_mutex_lock(&r), 0);
    EXPECT_EQ(pthread_mutex_trylock(&r), 0);
    EXPECT_EQ(pthread_mutex_timedlock(&r, &ts), 0);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(pthread_mutex_unlock(&r), 0);
    EXPECT_EQ(pthread_mutex_unlock(&r), EPERM);
    EXPECT_EQ(pthread_mutex_destroy(&r), 0);

    EXPECT_EQ(pthread_mutexattr_settype(&a, 12345), EINVAL);
    EXPECT_EQ(pthread_mutexattr_setpshared(&a, 12345), EINVAL);
    EXPECT_EQ(pthread_mutexattr_destroy(&a), 0);
}

static void conditions(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    struct timespec ts = past(), mono = past_mono();
    EXPECT_EQ(pthread_mutex_lock(&m), 0);
    EXPECT_EQ(pthread_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_trylock(&m), EBUSY); /* held again */
    EXPECT_EQ(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
    EXPECT_EQ(pthread_cond_timedwait(&c, &m, &malformed), EINVAL);
    EXPECT_EQ(pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &mono), EINVAL);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);

    /* A condition variable on the monotonic clock. */
    pthread_condattr_t ca;
    EXPECT_EQ(pthread_condattr_init(&ca), 0);
    EXPECT_EQ(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
    EXPECT_EQ(pthread_condattr_setclock(&ca, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
    clockid_t clk = -1;
    EXPECT_EQ(pthread_condattr_getclock(&ca, &clk), 0);
    EXPECT_EQ(clk, CLOCK_MONOTONIC);
    pthread_cond_t mc;
    EXPECT_EQ(pthread_cond_init(&mc, &ca), 0);
    EXPECT_EQ(pthread_mutex_lock(&m), 0);
    EXPECT_EQ(pthread_cond_timedwait(&mc, &m, &mono), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
    EXPECT_EQ(pthread_cond_destroy(&mc), 0);
    EXPECT_EQ(pthread_condattr_destroy(&ca), 0);
}

static void *hold_write(void *arg)
{
    EXPECT_EQ(pthread_rwlock_wrlock(arg), 0);
    return NULL;
}

static void rwlocks(void)
{
    pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
    struct timespec ts = past(), mono = past_mono();
    EXPECT_EQ(pthread_rwlock_timedrdlock(&l, &ts), 0);
    EXPECT_EQ(pthread_rwlock_tryrdlock(&l), 0);
    EXPECT_EQ(pthread_rwlock_trywrlock(&l), EBUSY);
    EXPECT_EQ(pthread_rwlock_timedwrlock(&l, &ts), ETIMEDOUT);
    EXPECT_EQ(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
    EXPECT_EQ(pthread_rwlock_unlock(&l), 0);
    EXPECT_EQ(pthread_rwlock_unlock(&l), 0);
    EXPECT_EQ(pthread_rwlock_wrlock(&l), 0);
    EXPECT_EQ(pthread_rwlock_wrlock(&l), EDEADLK);
    EXPECT_EQ(pthread_rwlock_rdlock(&l), EDEADLK);
    EXPECT_EQ(pthread_rwlock_unlock(&l), 0);

    pthread_rwlock_t w = PTHREAD_RWLOCK_INITIALIZER;
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, hold_write, &w), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_rwlock_tryrdlock(&w), EBUSY);
    EXPECT_EQ(pthread_rwlock_timedrdlock(&w, &ts), ETIMEDOUT);
    EXPECT_EQ(pthread_rwlock_clockrdlock(&w, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
    EXPECT_EQ(pthread_rwlock_timedrdlock(&w, &malformed), EINVAL);
    EXPECT_EQ(pthread_rwlock_clockrdlock(&w, CLOCK_PROCESS_CPUTIME_ID, &mono), EINVAL);
}

static void semaphores(void)
{
    sem_t s;
    EXPECT_EQ(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1u), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(sem_init(&s, 0, 0), 0);
    errno = 0;
    EXPECT_EQ(sem_trywait(&s), -1);
    EXPECT_EQ(errno, EAGAIN);
    struct timespec ts = past(), mono = past_mono();
    errno = 0;
    EXPECT_EQ(sem_timedwait(&s, &ts), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    errno = 0;
    EXPECT_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &mono), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    errno = 0;
    EXPECT_EQ(sem_timedwait(&s, &malformed), -1);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &mono), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(sem_destroy(&s), 0);

    EXPECT_EQ(sem_init(&s, 0, SEM_VALUE_MAX), 0);
    errno = 0;
    EXPECT_EQ(sem_post(&s), -1);
    EXPECT_EQ(errno, EOVERFLOW);
    int v = -1;
    EXPECT_EQ(sem_getvalue(&s, &v), 0);
    EXPECT_EQ(v, SEM_VALUE_MAX);
    EXPECT_EQ(sem_timedwait(&s, &ts), 0); /* available: the deadline is not looked at */
    EXPECT_EQ(sem_destroy(&s), 0);
}

static void *count_to(void *arg)
{
    return arg;
}

static void threads_and_attributes(void)
{
    EXPECT_EQ(pthread_join(pthread_self(), NULL), EDEADLK);

    pthread_attr_t a;
    EXPECT_EQ(pthread_attr_init(&a), 0);
    EXPECT_EQ(pthread_attr_setdetachstate(&a, 12345), EINVAL);
    EXPECT_EQ(pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN - 1), EINVAL);
    EXPECT_EQ(pthread_attr_setinheritsched(&a, 12345), EINVAL);
    EXPECT_EQ(pthread_attr_setscope(&a, 12345), EINVAL);
    EXPECT_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
    int d = -1;
    EXPECT_EQ(pthread_attr_getdetachstate(&a, &d), 0);
    EXPECT_EQ(d, PTHREAD_CREATE_DETACHED);
    EXPECT_EQ(pthread_attr_destroy(&a), 0);

    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, count_to, (void *)42), 0);
    void *ret = NULL;
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == (void *)42);

    int old = -1;
    EXPECT_EQ(pthread_setcancelstate(12345, &old), EINVAL);
    EXPECT_EQ(pthread_setcanceltype(12345, &old), EINVAL);
    EXPECT_EQ(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old), 0);
    EXPECT_EQ(old, PTHREAD_CANCEL_ENABLE);
    EXPECT_EQ(pthread_setcancelstate(old, NULL), 0);

    pthread_barrier_t b;
    EXPECT_EQ(pthread_barrier_init(&b, NULL, 0), EINVAL);
    EXPECT_EQ(pthread_barrier_init(&b, NULL, 1), 0);
    EXPECT_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    EXPECT_EQ(pthread_barrier_destroy(&b), 0);

    pthread_spinlock_t sl;
    EXPECT_EQ(pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE), 0);
    EXPECT_EQ(pthread_spin_lock(&sl), 0);
    EXPECT_EQ(pthread_spin_trylock(&sl), EBUSY);
    EXPECT_EQ(pthread_spin_unlock(&sl), 0);
    EXPECT_EQ(pthread_spin_destroy(&sl), 0);
}

static void keys(void)
{
    pthread_key_t k;
    EXPECT_EQ(pthread_key_create(&k, NULL), 0);
    EXPECT(pthread_getspecific(k) == NULL);
    EXPECT_EQ(pthread_setspecific(k, (void *)7), 0);
    EXPECT(pthread_getspecific(k) == (void *)7);
    EXPECT_EQ(pthread_key_delete(k), 0);
    pthread_key_t k2;
    EXPECT_EQ(pthread_key_create(&k2, NULL), 0);
    EXPECT(pthread_getspecific(k2) == NULL); /* not the deleted key's value */
    EXPECT_EQ(pthread_key_delete(k2), 0);

}

int main(void)
{
    mutexes();
    conditions();
    rwlocks();
    semaphores();
    threads_and_attributes();
    keys();
    return 0;
}

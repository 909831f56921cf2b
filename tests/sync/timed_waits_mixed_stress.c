/* SPDX-License-Identifier: MIT */
/* Description: many user threads mix short sleeps (cap_sleep_ns,
 * nanosleep, usleep), sleeps made while holding a mutex (plain and
 * robust), timed condition and semaphore waits that end either by their
 * timeout or by a wake-up, and the wake-ups themselves, beside a ticker
 * sleeping in a loop and a reader parked on a pipe the others write to.
 * A lost timer or a lost wake-up leaves a thread parked for ever: the
 * alarm turns that hang into a failure. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <capriccio.h>

#include "check.h"

enum { THREADS = 24, ITERS = 1500 };

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rm; /* robust: a kind glibc keeps to itself */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static atomic_int ticking = 1;
static atomic_long ticks;
static int pipefd[2];
static atomic_long piped;

/* Parked in read() most of the time: keeps the I/O backend in the idle
 * path, beside the timers. */
static void *reader(void *arg)
{
    (void)arg;
    char c;
    while (read(pipefd[0], &c, 1) == 1)
        atomic_fetch_add(&piped, 1);
    return NULL;
}

static void deadline_in(struct timespec *ts, long ns)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ns;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

static void *ticker(void *arg)
{
    (void)arg;
    while (atomic_load(&ticking)) {
        atomic_fetch_add(&ticks, 1);
        cap_sleep_ns(100000);
    }
    return NULL;
}

static void *mixer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (int i = 0; i < ITERS; i++) {
        unsigned r = (unsigned)rand_r(&seed);
        struct timespec ts;
        switch (r % 10) {
        case 0:
            cap_sleep_ns(1000 + r % 20000);
            break;
        case 1: {
            struct timespec d = { 0, 1000 + (long)(r % 10000) };
            CHECK_EQ(nanosleep(&d, NULL), 0);
            break;
        }
        case 2:
            CHECK_EQ(pthread_mutex_lock(&m), 0);
            cap_sleep_ns(10000); /* parks holding it */
            CHECK_EQ(pthread_mutex_unlock(&m), 0);
            break;
        case 3:
            CHECK_EQ(pthread_mutex_lock(&rm), 0);
            cap_sleep_ns(10000);
            CHECK_EQ(pthread_mutex_unlock(&rm), 0);
            break;
        case 4: {
            CHECK_EQ(pthread_mutex_lock(&cm), 0);
            deadline_in(&ts, 5000 + (long)(r % 30000));
            int rc = pthread_cond_timedwait(&cv, &cm, &ts);
            CHECK(rc == 0 || rc == ETIMEDOUT);
            CHECK_EQ(pthread_mutex_unlock(&cm), 0);
            break;
        }
        case 5:
            CHECK_EQ(pthread_mutex_lock(&cm), 0);
            if (r & 64)
                CHECK_EQ(pthread_cond_broadcast(&cv), 0);
            else
                CHECK_EQ(pthread_cond_signal(&cv), 0);
            CHECK_EQ(pthread_mutex_unlock(&cm), 0);
            break;
        case 6: {
            deadline_in(&ts, 5000 + (long)(r % 30000));
            int rc = sem_timedwait(&sem, &ts);
            CHECK(rc == 0 || errno == ETIMEDOUT);
            break;
        }
        case 7:
            CHECK_EQ(sem_post(&sem), 0);
            break;
        case 8:
            if ((r >> 8) & 1)
                CHECK_EQ(write(pipefd[1], "x", 1), 1);
            else
                usleep(1 + r % 15);
            break;
        default:
            cap_yield();
            break;
        }
    }
    return NULL;
}

int main(void)
{
    alarm(120); /* a lost timer or wake-up hangs: fail instead */
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutex_init(&rm, &a), 0);
    CHECK_EQ(sem_init(&sem, 0, 0), 0);
    CHECK_EQ(pipe(pipefd), 0);
    pthread_t tick, rd, t[THREADS];
    CHECK_EQ(pthread_create(&tick, NULL, ticker, NULL), 0);
    CHECK_EQ(pthread_create(&rd, NULL, reader, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, mixer, (void *)(uintptr_t)i), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    atomic_store(&ticking, 0);
    CHECK_EQ(pthread_join(tick, NULL), 0);
    CHECK_EQ(close(pipefd[1]), 0);
    CHECK_EQ(pthread_join(rd, NULL), 0);
    CHECK(atomic_load(&ticks) > 0);
    CHECK(atomic_load(&piped) > 0);
    return 0;
}

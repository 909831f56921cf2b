/* SPDX-License-Identifier: MIT */
/* Description: corners of glibc's condition variable as the library runs
 * it. (1) A process-shared one is glibc's own wait (it may be shared with
 * another process), which checks the mutex's holder by kernel thread id:
 * with a RECURSIVE or ERRORCHECK glibc mutex held by a user thread it
 * returned EPERM until the mutex was lent to it under that id; now it
 * times out as glibc does and the mutex is the caller's again after (an
 * unlock works, a second one is refused). (2) A kernel thread the
 * library does not run that times out in pthread_cond_timedwait gets
 * ETIMEDOUT from that call; it used to get a spurious 0 first (and the
 * condition variable kept counting it as a sleeper). */
#include <pthread.h>

#include "util.h"

static void pshared_cond_with(int type)
{
    pthread_mutexattr_t ma;
    pthread_mutex_t m;
    CHECK_EQ(pthread_mutexattr_init(&ma), 0);
    CHECK_EQ(pthread_mutexattr_settype(&ma, type), 0);
    CHECK_EQ(pthread_mutex_init(&m, &ma), 0);
    pthread_condattr_t ca;
    pthread_cond_t c;
    CHECK_EQ(pthread_condattr_init(&ca), 0);
    CHECK_EQ(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_cond_init(&c, &ca), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    struct timespec abs = ts_after(CLOCK_REALTIME, 10);
    CHECK_EQ(pthread_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    abs = ts_after(CLOCK_MONOTONIC, 10);
    CHECK_EQ(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    if (type != PTHREAD_MUTEX_NORMAL)
        CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(pthread_cond_destroy(&c), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
}

static pthread_mutex_t fm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fc = PTHREAD_COND_INITIALIZER;

static void *foreign_times_out(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&fm), 0);
    for (int i = 0; i < 5; i++) {
        struct timespec abs = ts_after(CLOCK_REALTIME, 5);
        CHECK_EQ(pthread_cond_timedwait(&fc, &fm, &abs), ETIMEDOUT);
        CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    }
    CHECK_EQ(pthread_mutex_unlock(&fm), 0);
    return NULL;
}

int main(void)
{
    pshared_cond_with(PTHREAD_MUTEX_NORMAL);
    pshared_cond_with(PTHREAD_MUTEX_RECURSIVE);
    pshared_cond_with(PTHREAD_MUTEX_ERRORCHECK);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign_times_out, NULL), 0);
    CHECK_EQ(pthread_join(f, NULL), 0);
    return 0;
}

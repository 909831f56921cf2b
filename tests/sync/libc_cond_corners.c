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
 * condition variable kept counting it as a sleeper). (3) With two
 * workers: a user thread waits on a process-shared condition variable
 * (glibc's wait, which sleeps its worker) with a private mutex, which
 * glibc's wait lets go of with its internal unlock; a user thread on the
 * other worker, parked on that mutex, gets it meanwhile and signals (not
 * under CAP_MIGRATE, where main may share B's worker). It
 * was never woken (no wrapper sees that unlock) until the waiter's
 * timeout; now a thread waiting for a mutex a kernel thread holds looks
 * again in slices. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc;
static int pflag; /* [pm] */
static atomic_int role, b_started;
static int main_worker;

/* Of many such threads, the first on another worker than main's takes
 * the part of B. */
static void *candidate(void *arg)
{
    (void)arg;
    if (cap_worker_id() == main_worker || atomic_fetch_add(&role, 1) != 0)
        return NULL;
    atomic_store(&b_started, 1);
    CHECK_EQ(pthread_mutex_lock(&pm), 0); /* parks: main holds pm */
    pflag = 1;
    CHECK_EQ(pthread_cond_signal(&pc), 0);
    CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    return NULL;
}

static void pshared_cond_private_mutex(void)
{
    enum { CANDIDATES = 100 };
    pthread_condattr_t ca;
    CHECK_EQ(pthread_condattr_init(&ca), 0);
    CHECK_EQ(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_cond_init(&pc, &ca), 0);
    CHECK_EQ(pthread_mutex_lock(&pm), 0);
    main_worker = cap_worker_id();
    cap_thread_t t[CANDIDATES];
    for (int i = 0; i < CANDIDATES; i++)
        t[i] = spawn(candidate, NULL);
    while (!atomic_load(&b_started))
        cap_yield();
    cap_sleep_ns(20000000); /* B parks on pm */
    struct timespec abs = ts_after(CLOCK_REALTIME, 20000);
    int rc = 0;
    while (!pflag && rc == 0)
        rc = pthread_cond_timedwait(&pc, &pm, &abs);
    CHECK_EQ(rc, 0);
    CHECK_EQ(pflag, 1);
    CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    for (int i = 0; i < CANDIDATES; i++)
        join(t[i]);
    CHECK_EQ(pthread_cond_destroy(&pc), 0);
}

int main(void)
{
    pshared_cond_with(PTHREAD_MUTEX_NORMAL);
    pshared_cond_with(PTHREAD_MUTEX_RECURSIVE);
    pshared_cond_with(PTHREAD_MUTEX_ERRORCHECK);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign_times_out, NULL), 0);
    CHECK_EQ(pthread_join(f, NULL), 0);
    /* main stays on its worker unless threads migrate; B is on another */
    const char *migrate = getenv("CAP_MIGRATE");
    if (cap_worker_count() >= 2 && (migrate == NULL || strcmp(migrate, "1") != 0))
        pshared_cond_private_mutex();
    return 0;
}

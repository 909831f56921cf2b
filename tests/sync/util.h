/* SPDX-License-Identifier: MIT */
/* Helpers for the sync tests: absolute times, thread creation with a
 * small stack for the tests that run thousands of threads, and
 * process-shared objects in memory forked children share. */
#ifndef CAP_TESTS_SYNC_UTIL_H
#define CAP_TESTS_SYNC_UTIL_H

#include <capriccio.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "check.h"

/* The waiters a semaphore counts (the high half of its word, without the
 * process-shared mark: src/sync/sync.h); glibc's sem_t has the same word. */
static inline uint32_t sem_waiters_counted(const void *sem)
{
    uint64_t word = __atomic_load_n((const uint64_t *)sem, __ATOMIC_SEQ_CST);
    return (uint32_t)(word >> 32) & 0x7fffffffu;
}

static inline struct timespec ts_now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts;
}

/* now + ms on the given clock (ms may be negative: a time passed) */
static inline struct timespec ts_after(clockid_t clock, long ms)
{
    struct timespec ts = ts_now(clock);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    } else if (ts.tv_nsec < 0) {
        ts.tv_sec--;
        ts.tv_nsec += 1000000000L;
    }
    return ts;
}

/* 1 if a >= b */
static inline int ts_ge(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

static inline cap_thread_t spawn(void *(*fn)(void *), void *arg)
{
    cap_thread_attr_t attr = CAP_THREAD_ATTR_INITIALIZER;
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, 64 * 1024), 0);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, &attr, fn, arg), 0);
    return t;
}

static inline void *join(cap_thread_t t)
{
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    return ret;
}

/* size zeroed bytes that this process and its forked children share. */
static inline void *shared_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* A process-shared mutex of the given type, and condition variable. */
static inline void shared_mutex_init(cap_mutex_t *m, int type)
{
    cap_mutexattr_t a;
    CHECK_EQ(cap_mutexattr_init(&a), 0);
    CHECK_EQ(cap_mutexattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_mutexattr_settype(&a, type), 0);
    CHECK_EQ(cap_mutex_init(m, &a), 0);
}

static inline void shared_cond_init(cap_cond_t *c)
{
    cap_condattr_t a;
    CHECK_EQ(cap_condattr_init(&a), 0);
    CHECK_EQ(cap_condattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_cond_init(c, &a), 0);
}

#endif /* CAP_TESTS_SYNC_UTIL_H */

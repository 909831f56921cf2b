/* SPDX-License-Identifier: MIT */
/*
 * glibc's pthread_barrier_t, for every thread (see libc_sync.h for why
 * user threads need this): glibc's wait sleeps the worker of a user thread
 * that arrives early, so the threads still to arrive on that worker never
 * run. As with condition variables (libc_cond.c), the barrier is ours in
 * glibc's storage: a cap_barrier_t at its start (glibc's barrier has no
 * static initializer, so pthread_barrier_init always comes first), and
 * a mark in the last word, which glibc's barrier does not use, saying
 * whose it is. A process-shared barrier stays glibc's (another process
 * may use it with glibc's code): pthread_barrier_init leaves it with the
 * mark clear.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "intercept/intercept.h"

enum { MARK_OURS = 0x62706163 }; /* "capb" */

struct overlay {
    cap_barrier_t barrier;
    uint32_t pad;
    uint32_t mark;
};

_Static_assert(sizeof(struct overlay) == sizeof(pthread_barrier_t), "glibc's barrier size");
_Static_assert(_Alignof(pthread_barrier_t) >= _Alignof(struct overlay), "alignment");
_Static_assert(CAP_BARRIER_SERIAL_THREAD == PTHREAD_BARRIER_SERIAL_THREAD, "serial value");

static struct overlay *overlay(pthread_barrier_t *b)
{
    return (struct overlay *)(void *)b;
}

static bool ours(pthread_barrier_t *b)
{
    return __atomic_load_n(&overlay(b)->mark, __ATOMIC_RELAXED) == MARK_OURS;
}

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr,
                         unsigned count)
{
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr != NULL)
        pthread_barrierattr_getpshared(attr, &pshared);
    if (pshared == PTHREAD_PROCESS_SHARED) {
        int rc = CAP__REAL(pthread_barrier_init)(b, attr, count);
        if (rc == 0)
            overlay(b)->mark = 0;
        return rc;
    }
    /* glibc refuses a count from UINT_MAX / 2 on (its counters' room);
     * the same program gets the same EINVAL here. */
    if (count >= UINT_MAX / 2)
        return EINVAL;
    struct overlay o = { .mark = MARK_OURS };
    int rc = cap_barrier_init(&o.barrier, NULL, count);
    if (rc == 0)
        memcpy(b, &o, sizeof o);
    return rc;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
    if (!ours(b))
        return CAP__REAL(pthread_barrier_wait)(b);
    return cap_barrier_wait(&overlay(b)->barrier);
}

int pthread_barrier_destroy(pthread_barrier_t *b)
{
    if (!ours(b))
        return CAP__REAL(pthread_barrier_destroy)(b);
    int rc = cap_barrier_destroy(&overlay(b)->barrier);
    if (rc == 0)
        overlay(b)->mark = 0;
    return rc;
}

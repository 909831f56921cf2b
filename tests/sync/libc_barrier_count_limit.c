/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_barrier_init (code built with <pthread.h>)
 * refuses the counts glibc refuses, with EINVAL: 0 and every count from
 * UINT_MAX / 2 on (INT_MAX among them); the largest count glibc takes,
 * UINT_MAX / 2 - 1, is taken, and a barrier of 1 still works. */
#include <limits.h>
#include <pthread.h>

#include "util.h"

int main(void)
{
    pthread_barrier_t b;
    CHECK_EQ(pthread_barrier_init(&b, NULL, 0), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, UINT_MAX / 2), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, INT_MAX), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, UINT_MAX), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, UINT_MAX / 2 - 1), 0);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    CHECK_EQ(pthread_barrier_init(&b, NULL, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: the documented limit of robust mutexes (README Limits):
 * one process holds at most 4,096 at once, noted in a table the lock path
 * allocates nothing for. The next lock, trylock or timed lock fails with
 * EAGAIN, without taking the mutex (another thread can lock it) and
 * without waiting; after one unlock the lock succeeds, and a thread that
 * ends holding the 4,096 leaves each of them "owner died" (EOWNERDEAD to
 * the next locker), with the table free again. */
#include <capriccio/pthread.h>
#include <errno.h>
#include <stdlib.h>

#include "check.h"

enum { LIMIT = 4096 };

static pthread_mutex_t *mutexes; /* LIMIT + 1 */

static void *other_takes_last(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_trylock(&mutexes[LIMIT]), EAGAIN); /* the table is full */
    return NULL;
}

static void *hold_all_and_end(void *arg)
{
    (void)arg;
    for (int i = 0; i < LIMIT; i++)
        CHECK_EQ(pthread_mutex_lock(&mutexes[i]), 0);
    return NULL;
}

int main(void)
{
    mutexes = calloc(LIMIT + 1, sizeof *mutexes);
    CHECK(mutexes != NULL);
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    for (int i = 0; i <= LIMIT; i++)
        CHECK_EQ(pthread_mutex_init(&mutexes[i], &a), 0);

    for (int i = 0; i < LIMIT; i++)
        CHECK_EQ(pthread_mutex_lock(&mutexes[i]), 0);
    CHECK_EQ(pthread_mutex_lock(&mutexes[LIMIT]), EAGAIN);
    CHECK_EQ(pthread_mutex_trylock(&mutexes[LIMIT]), EAGAIN);
    struct timespec at = { 0, 0 }; /* long past: would time out, were it taken */
    CHECK_EQ(pthread_mutex_timedlock(&mutexes[LIMIT], &at), EAGAIN);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, other_takes_last, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(pthread_mutex_unlock(&mutexes[0]), 0);
    CHECK_EQ(pthread_mutex_lock(&mutexes[LIMIT]), 0); /* a note is free */
    CHECK_EQ(pthread_mutex_unlock(&mutexes[LIMIT]), 0);
    for (int i = 1; i < LIMIT; i++)
        CHECK_EQ(pthread_mutex_unlock(&mutexes[i]), 0);

    /* A thread ends holding a full table's worth. */
    CHECK_EQ(pthread_create(&t, NULL, hold_all_and_end, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    for (int i = 0; i < LIMIT; i++) {
        CHECK_EQ(pthread_mutex_lock(&mutexes[i]), EOWNERDEAD);
        CHECK_EQ(pthread_mutex_consistent(&mutexes[i]), 0);
    }
    CHECK_EQ(pthread_mutex_lock(&mutexes[LIMIT]), EAGAIN); /* ours now: full again */
    for (int i = 0; i < LIMIT; i++)
        CHECK_EQ(pthread_mutex_unlock(&mutexes[i]), 0);
    CHECK_EQ(pthread_mutex_lock(&mutexes[LIMIT]), 0);
    CHECK_EQ(pthread_mutex_unlock(&mutexes[LIMIT]), 0);
    free(mutexes);
    return 0;
}

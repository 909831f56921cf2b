/* SPDX-License-Identifier: MIT */
/* Description: a condition wait on a robust mutex taken with EOWNERDEAD
 * and not yet made consistent releases it as an unlock does: the mutex
 * becomes unrecoverable (POSIX; NPTL alike). Another thread's lock while
 * the wait waits fails with ENOTRECOVERABLE, so does the wait's own
 * take-back, and pthread_mutex_consistent then says EINVAL. The wait's
 * release used to hand the mutex on as healthy: the other thread's lock
 * returned 0 on the inconsistent state, the wait returned 0, and a later
 * consistent succeeded. Process-private and process-shared mutexes. */
#include <capriccio/pthread.h>
#include <errno.h>

#include "check.h"

static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *die_holding(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    return NULL;
}

/* Blocks on m while main holds it; takes its turn once main's wait
 * releases it, then wakes main (main waits on c by then: its release
 * came after it joined c's waiters). */
static void *other(void *arg)
{
    (void)arg;
    int rc = pthread_mutex_lock(&m);
    if (rc == 0 || rc == EOWNERDEAD)
        CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_cond_signal(&c), 0);
    return (void *)(intptr_t)rc;
}

static void round_with(int pshared)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutexattr_setpshared(&a, pshared), 0);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);

    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, die_holding, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(pthread_mutex_lock(&m), EOWNERDEAD);

    CHECK_EQ(pthread_create(&t, NULL, other, NULL), 0);
    CHECK_EQ(pthread_cond_wait(&c, &m), ENOTRECOVERABLE); /* not held now */
    void *other_rc;
    CHECK_EQ(pthread_join(t, &other_rc), 0);
    CHECK_EQ((int)(intptr_t)other_rc, ENOTRECOVERABLE);
    CHECK_EQ(pthread_mutex_consistent(&m), EINVAL);
    CHECK_EQ(pthread_mutex_lock(&m), ENOTRECOVERABLE);
    CHECK_EQ(pthread_mutex_trylock(&m), ENOTRECOVERABLE);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
}

int main(void)
{
    round_with(PTHREAD_PROCESS_PRIVATE);
    round_with(PTHREAD_PROCESS_SHARED);
    return 0;
}

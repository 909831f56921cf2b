/* SPDX-License-Identifier: MIT */
/* Description: recursive and error-checking mutexes made through a
 * pthread_mutexattr_t behave as POSIX says: relock counts or fails with
 * EDEADLK, unlock by a non-owner is EPERM, trylock by another thread is
 * EBUSY; the GNU static initializers give the same types. */
#include <errno.h>
#include <pthread.h>

#include "check.h"

static pthread_mutex_t rec, chk;

static void *other(void *arg)
{
    pthread_mutex_t *mx = arg;
    EXPECT_EQ(pthread_mutex_unlock(mx), EPERM);
    EXPECT_EQ(pthread_mutex_trylock(mx), EBUSY);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    int type = -1;
    pthread_t t;
    EXPECT_EQ(pthread_mutexattr_init(&a), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
    EXPECT_EQ(pthread_mutexattr_gettype(&a, &type), 0);
    EXPECT_EQ(type, PTHREAD_MUTEX_RECURSIVE);
    EXPECT_EQ(pthread_mutex_init(&rec, &a), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
    EXPECT_EQ(pthread_mutex_init(&chk, &a), 0);
    EXPECT_EQ(pthread_mutexattr_destroy(&a), 0);

    EXPECT_EQ(pthread_mutex_lock(&rec), 0);
    EXPECT_EQ(pthread_mutex_lock(&rec), 0);
    EXPECT_EQ(pthread_mutex_trylock(&rec), 0);
    EXPECT_EQ(pthread_create(&t, NULL, other, &rec), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(pthread_mutex_unlock(&rec), 0);
    EXPECT_EQ(pthread_mutex_unlock(&rec), EPERM);

    EXPECT_EQ(pthread_mutex_lock(&chk), 0);
    EXPECT_EQ(pthread_mutex_lock(&chk), EDEADLK);
    EXPECT_EQ(pthread_create(&t, NULL, other, &chk), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_mutex_unlock(&chk), 0);
    EXPECT_EQ(pthread_mutex_unlock(&chk), EPERM);
    EXPECT_EQ(pthread_mutex_destroy(&rec), 0);
    EXPECT_EQ(pthread_mutex_destroy(&chk), 0);

#ifdef PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
    pthread_mutex_t r2 = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    EXPECT_EQ(pthread_mutex_lock(&r2), 0);
    EXPECT_EQ(pthread_mutex_lock(&r2), 0);
    EXPECT_EQ(pthread_mutex_unlock(&r2), 0);
    EXPECT_EQ(pthread_mutex_unlock(&r2), 0);
    pthread_mutex_t c2 = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    EXPECT_EQ(pthread_mutex_lock(&c2), 0);
    EXPECT_EQ(pthread_mutex_lock(&c2), EDEADLK);
    EXPECT_EQ(pthread_mutex_unlock(&c2), 0);
#endif
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: an ERRORCHECK mutex reports a relock by its owner
 * (EDEADLK), trylock by its owner (EBUSY), unlock by a non-owner and
 * unlock of a free mutex (EPERM), and otherwise works as a mutex. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_ERRORCHECK_INITIALIZER;

static void *foreign_unlock(void *arg)
{
    return (void *)(intptr_t)cap_mutex_unlock(arg);
}

static void *lock_unlock(void *arg)
{
    CHECK_EQ(cap_mutex_lock(arg), 0);
    CHECK_EQ(cap_mutex_lock(arg), EDEADLK);
    CHECK_EQ(cap_mutex_unlock(arg), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_mutex_unlock(&m), EPERM);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK);
    CHECK_EQ(cap_mutex_trylock(&m), EBUSY);
    CHECK_EQ((intptr_t)join(spawn(foreign_unlock, &m)), EPERM);
    cap_thread_t t = spawn(lock_unlock, &m); /* blocks until we unlock */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    join(t);
    CHECK_EQ(cap_mutex_unlock(&m), EPERM);

    cap_mutexattr_t a;
    cap_mutex_t d;
    CHECK_EQ(cap_mutexattr_init(&a), 0);
    CHECK_EQ(cap_mutexattr_settype(&a, CAP_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(cap_mutex_init(&d, &a), 0);
    CHECK_EQ(cap_mutex_lock(&d), 0);
    CHECK_EQ(cap_mutex_lock(&d), EDEADLK);
    CHECK_EQ(cap_mutex_unlock(&d), 0);
    CHECK_EQ(cap_mutex_destroy(&d), 0);
    return 0;
}

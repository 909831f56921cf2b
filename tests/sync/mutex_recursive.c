/* SPDX-License-Identifier: MIT */
/* Description: a RECURSIVE mutex can be relocked (lock and trylock) by its
 * owner, stays held until unlocked as many times, and refuses unlock by a
 * thread that does not own it (EPERM). The static initializer works too. */
#include "util.h"

static cap_mutex_t m;
static cap_mutex_t s = CAP_MUTEX_RECURSIVE_INITIALIZER;

static void *probe(void *arg)
{
    cap_mutex_t *mx = arg;
    int unlock = cap_mutex_unlock(mx);
    int trylock = cap_mutex_trylock(mx);
    if (trylock == 0)
        CHECK_EQ(cap_mutex_unlock(mx), 0);
    return (void *)(intptr_t)(unlock * 1000 + trylock);
}

int main(void)
{
    cap_mutexattr_t a;
    CHECK_EQ(cap_mutexattr_init(&a), 0);
    CHECK_EQ(cap_mutexattr_settype(&a, CAP_MUTEX_RECURSIVE), 0);
    CHECK_EQ(cap_mutex_init(&m, &a), 0);
    CHECK_EQ(cap_mutexattr_destroy(&a), 0);

    for (int i = 0; i < 3; i++)
        CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_trylock(&m), 0); /* depth 4 */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        CHECK_EQ((intptr_t)join(spawn(probe, &m)), EPERM * 1000 + EBUSY);
    }
    CHECK_EQ(cap_mutex_destroy(&m), EBUSY);
    CHECK_EQ(cap_mutex_unlock(&m), 0); /* depth 0: free */
    CHECK_EQ((intptr_t)join(spawn(probe, &m)), EPERM * 1000 + 0);
    CHECK_EQ(cap_mutex_unlock(&m), EPERM);
    CHECK_EQ(cap_mutex_destroy(&m), 0);

    CHECK_EQ(cap_mutex_lock(&s), 0);
    CHECK_EQ(cap_mutex_lock(&s), 0);
    CHECK_EQ((intptr_t)join(spawn(probe, &s)), EPERM * 1000 + EBUSY);
    CHECK_EQ(cap_mutex_unlock(&s), 0);
    CHECK_EQ(cap_mutex_unlock(&s), 0);
    CHECK_EQ(cap_mutex_unlock(&s), EPERM);
    return 0;
}

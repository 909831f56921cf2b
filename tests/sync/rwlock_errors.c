/* SPDX-License-Identifier: MIT */
/* Description: a writer that asks again for the lock it holds gets
 * EDEADLK (read or write), unlock of a free lock or of another thread's
 * write lock is EPERM, destroy of a held lock is EBUSY. */
#include "util.h"

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;

static void *foreign_unlock(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)cap_rwlock_unlock(&rw);
}

int main(void)
{
    CHECK_EQ(cap_rwlock_unlock(&rw), EPERM);
    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    CHECK_EQ(cap_rwlock_wrlock(&rw), EDEADLK);
    CHECK_EQ(cap_rwlock_rdlock(&rw), EDEADLK);
    CHECK_EQ(cap_rwlock_trywrlock(&rw), EBUSY);
    CHECK_EQ(cap_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_EQ(cap_rwlock_destroy(&rw), EBUSY);
    CHECK_EQ((intptr_t)join(spawn(foreign_unlock, NULL)), EPERM);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), EPERM);
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    CHECK_EQ(cap_rwlock_init(&rw, NULL), 0);
    CHECK_EQ(cap_rwlock_init(NULL, NULL), EINVAL);
    return 0;
}

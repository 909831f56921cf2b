/* SPDX-License-Identifier: MIT */
/* Description: many readers hold a read-write lock at once (a read lock
 * taken while 50 other threads hold it for reading succeeds), writers
 * exclude readers and each other (try variants EBUSY), and the lock is
 * free again once everyone unlocked (destroy 0). */
#include "util.h"

enum { READERS = 50 };

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;
static cap_sem_t holding, release_them;

static void *reader(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    CHECK_EQ(cap_sem_post(&holding), 0);
    CHECK_EQ(cap_sem_wait(&release_them), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

static void *try_both(void *arg)
{
    (void)arg;
    int r = cap_rwlock_tryrdlock(&rw);
    if (r == 0)
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    int w = cap_rwlock_trywrlock(&rw);
    if (w == 0)
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return (void *)(intptr_t)(r * 1000 + w);
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&holding, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&release_them, 0, 0), 0);
    cap_thread_t t[READERS];
    for (int i = 0; i < READERS; i++)
        t[i] = spawn(reader, NULL);
    for (int i = 0; i < READERS; i++)
        CHECK_EQ(cap_sem_wait(&holding), 0);
    /* 50 readers hold it: another reader gets in, a writer does not. */
    CHECK_EQ((intptr_t)join(spawn(try_both, NULL)), 0 * 1000 + EBUSY);
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    CHECK_EQ(cap_rwlock_destroy(&rw), EBUSY);
    for (int i = 0; i < READERS; i++)
        CHECK_EQ(cap_sem_post(&release_them), 0);
    for (int i = 0; i < READERS; i++)
        join(t[i]);

    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    CHECK_EQ((intptr_t)join(spawn(try_both, NULL)), EBUSY * 1000 + EBUSY);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    CHECK_EQ((intptr_t)join(spawn(try_both, NULL)), 0);
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: writers move money between two accounts under a
 * read-write lock while readers audit the sum; no reader ever sees money
 * in flight, and the writers' transfers all happen. */
#include <pthread.h>
#include <sched.h>
#include <errno.h>

#include "check.h"

enum { READERS = 60, WRITERS = 20, ROUNDS = 200 };

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long acct_a = 1000, acct_b = 1000, transfers;

static void *audit(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(pthread_rwlock_rdlock(&rw), 0);
        long sum = acct_a + acct_b;
        if (i % 20 == 0)
            sched_yield();
        EXPECT_EQ(sum, 2000);
        EXPECT_EQ(acct_a + acct_b, 2000);
        EXPECT_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void *transfer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(pthread_rwlock_wrlock(&rw), 0);
        acct_a -= 7;
        if (i % 10 == 0)
            sched_yield();
        acct_b += 7;
        transfers++;
        EXPECT_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[READERS + WRITERS];
    for (int i = 0; i < READERS + WRITERS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, i % 4 == 3 ? transfer : audit, NULL), 0);
    for (int i = 0; i < READERS + WRITERS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    EXPECT_EQ(transfers, (long)WRITERS * ROUNDS);
    EXPECT_EQ(acct_b - acct_a, 14L * WRITERS * ROUNDS);

    EXPECT_EQ(pthread_rwlock_wrlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_tryrdlock(&rw), EBUSY);
    EXPECT_EQ(pthread_rwlock_unlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_rdlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_tryrdlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_trywrlock(&rw), EBUSY);
    EXPECT_EQ(pthread_rwlock_unlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_unlock(&rw), 0);
    EXPECT_EQ(pthread_rwlock_destroy(&rw), 0);
    return 0;
}

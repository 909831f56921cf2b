/* SPDX-License-Identifier: MIT */
/* Description: user threads take a glibc robust mutex and end holding it,
 * round after round, while a thread made with glibc's pthread_create
 * spins on pthread_mutex_trylock and takes each one as soon as the word
 * says "owner died" (EOWNERDEAD), makes it consistent and unlocks it.
 * The exiting user thread must take the mutex off its worker's robust
 * list before it lets the word go: when it let go first, the other
 * thread had already linked the mutex into its own list, and the late
 * unlink cut that list (a crash in the unlink or in glibc's unlock
 * within some thousands of rounds: 3 runs in 5). */
#include <pthread.h>
#include <stdatomic.h>

#include "util.h"

enum { ROUNDS = 20000 };

static pthread_mutex_t m;
static atomic_int held, done, stop;

static void *dies_holding(void *arg)
{
    (void)arg;
    int rc = pthread_mutex_lock(&m);
    CHECK(rc == 0 || rc == EOWNERDEAD);
    if (rc == EOWNERDEAD)
        CHECK_EQ(pthread_mutex_consistent(&m), 0);
    atomic_store(&held, 1);
    return NULL;
}

static void *foreign(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (!atomic_load(&held))
            continue;
        atomic_store(&held, 0);
        int rc;
        while ((rc = pthread_mutex_trylock(&m)) == EBUSY)
            ;
        CHECK_EQ(rc, EOWNERDEAD);
        CHECK(m.__data.__list.__next != NULL); /* in this thread's list */
        CHECK_EQ(pthread_mutex_consistent(&m), 0);
        CHECK_EQ(pthread_mutex_unlock(&m), 0);
        atomic_store(&done, 1);
    }
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        join(spawn(dies_holding, NULL));
        while (!atomic_load(&done))
            cap_yield();
        atomic_store(&done, 0);
    }
    atomic_store(&stop, 1);
    CHECK_EQ(pthread_join(f, NULL), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    return 0;
}

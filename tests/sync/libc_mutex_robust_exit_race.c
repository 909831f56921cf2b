/* SPDX-License-Identifier: MIT */
/* Description: user threads take a glibc robust mutex and end holding it,
 * round after round, while a thread made with glibc's pthread_create
 * spins on pthread_mutex_trylock and takes each one as soon as the word
 * says "owner died" (EOWNERDEAD), makes it consistent and unlocks it.
 * The exiting user thread must take the mutex off its worker's robust
 * list before it lets the word go: when it let go first, the other
 * thread had already linked the mutex into its own list, and the late
 * unlink cut that list (a crash in the unlink or in glibc's unlock
 * within some thousands of rounds: 3 runs in 5).
 *
 * A round takes a few microseconds here, but its steps pass from the
 * glibc thread to the workers and back, so under a loaded machine (CI
 * runs tests side by side on 2 CPUs) a waiter that spun without giving
 * its CPU away cost a kernel time slice per step: 35-41 s for the whole
 * test in one CI run, and once over its limit (the dump showed both
 * workers taking turns on a steal-queue lock, which looked like a hang).
 * So the glibc thread spins briefly, then yields its CPU between looks,
 * and main sleeps on a glibc semaphore that it posts. */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "util.h"

enum { ROUNDS = 20000, SPINS = 1000 };

static pthread_mutex_t m;
static atomic_int held, stop;
static sem_t done;

/* Between looks: a pause, and after SPINS of them the CPU to whoever
 * else the kernel has (a glibc thread: the kernel's sched_yield). */
static void relax(unsigned *spins)
{
    if (++*spins < SPINS)
        __builtin_ia32_pause();
    else
        sched_yield();
}

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
    unsigned spins = 0;
    while (!atomic_load(&stop)) {
        if (!atomic_load(&held)) {
            relax(&spins);
            continue;
        }
        atomic_store(&held, 0);
        int rc;
        spins = 0;
        while ((rc = pthread_mutex_trylock(&m)) == EBUSY)
            relax(&spins);
        CHECK_EQ(rc, EOWNERDEAD);
        CHECK(m.__data.__list.__next != NULL); /* in this thread's list */
        CHECK_EQ(pthread_mutex_consistent(&m), 0);
        CHECK_EQ(pthread_mutex_unlock(&m), 0);
        spins = 0;
        CHECK_EQ(sem_post(&done), 0);
    }
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    CHECK_EQ(sem_init(&done, 0, 0), 0);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        join(spawn(dies_holding, NULL));
        CHECK_EQ(sem_wait(&done), 0); /* parks main */
    }
    atomic_store(&stop, 1);
    CHECK_EQ(pthread_join(f, NULL), 0);
    CHECK_EQ(sem_destroy(&done), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    return 0;
}

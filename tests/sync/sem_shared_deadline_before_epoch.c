/* SPDX-License-Identifier: MIT */
/* Description: a timed wait on a process-shared semaphore whose deadline
 * has a negative tv_sec (a time before the epoch, long past) times out,
 * as glibc's does (it returns ETIMEDOUT without asking the kernel, whose
 * futex wait refuses such a time with EINVAL), on either clock, from a
 * user thread and from a kernel thread the runtime does not run; a unit
 * that is there is still taken. Before, the kernel's EINVAL came back:
 * always from the kernel thread, and from a user thread whenever a pool
 * thread took its wait before the caller saw the deadline pass. */
#include <pthread.h>
#include <sys/mman.h>

#include "util.h"

enum { ROUNDS = 2000 };

static cap_sem_t *sem;

/* Every form of the timed wait, with a deadline before the epoch. */
static void times_out(void)
{
    const struct timespec before_epoch[] = { { -1, 0 }, { -5, 999999999 } };
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(cap_sem_timedwait(sem, &before_epoch[i]), ETIMEDOUT);
        CHECK_EQ(cap_sem_clockwait(sem, CLOCK_REALTIME, &before_epoch[i]), ETIMEDOUT);
        CHECK_EQ(cap_sem_clockwait(sem, CLOCK_MONOTONIC, &before_epoch[i]), ETIMEDOUT);
    }
}

static void *kernel_thread(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0); /* not a user thread */
    times_out();
    return NULL;
}

int main(void)
{
    sem = mmap(NULL, sizeof *sem, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sem != MAP_FAILED);
    CHECK_EQ(cap_sem_init(sem, 1, 0), 0);

    for (int i = 0; i < ROUNDS; i++)
        times_out();
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, kernel_thread, NULL), 0);
    CHECK_EQ(pthread_join(kt, NULL), 0);

    /* A unit that is there is taken whatever the deadline says. */
    const struct timespec before_epoch = { -1, 0 };
    CHECK_EQ(cap_sem_post(sem), 0);
    CHECK_EQ(cap_sem_timedwait(sem, &before_epoch), 0);

    CHECK_EQ(sem_waiters_counted(sem), 0);
    CHECK_EQ(cap_sem_destroy(sem), 0);
    CHECK_EQ(munmap(sem, sizeof *sem), 0);
    return 0;
}

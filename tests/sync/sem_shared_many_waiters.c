/* SPDX-License-Identifier: MIT */
/* Description: a process-shared semaphore (cap_sem_init with pshared) in
 * a shared mapping: 100 user threads wait on it at once while the
 * worker's other threads go on running, and a forked child's 100 posts
 * end every wait, each taking one unit; a post from this process ends a
 * wait too; a cancelled wait and a timed-out one leave no waiter counted
 * (cap_sem_destroy succeeds). Before process-shared semaphores a post
 * from the child woke nobody here (waits parked in this process, and the
 * post's futex wake went to the kernel's empty queue): the test hung. */
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

enum { WAITERS = 100 };

static cap_sem_t *sem;
static atomic_int done, bystander_ran;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(sem), 0);
    atomic_fetch_add(&done, 1);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void until_waiters(uint32_t n)
{
    while (sem_waiters_counted(sem) != n)
        cap_yield();
}

int main(void)
{
    sem = mmap(NULL, sizeof *sem, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sem != MAP_FAILED);
    CHECK_EQ(cap_sem_init(sem, 1, 0), 0);

    cap_thread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        t[i] = spawn(waiter, NULL);
    until_waiters(WAITERS);
    join(spawn(bystander, NULL));
    CHECK_EQ(atomic_load(&bystander_ran), 1);
    CHECK_EQ(atomic_load(&done), 0);

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < WAITERS; i++)
            if (cap_sem_post(sem) != 0)
                _exit(2);
        _exit(0);
    }
    for (int i = 0; i < WAITERS; i++)
        join(t[i]);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(atomic_load(&done), WAITERS);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_waiters_counted(sem), 0);

    /* A post from this process. */
    cap_thread_t w = spawn(waiter, NULL);
    until_waiters(1);
    CHECK_EQ(cap_sem_post(sem), 0);
    join(w);
    CHECK_EQ(atomic_load(&done), WAITERS + 1);

    /* A cancel ends a wait without taking a unit. */
    w = spawn(waiter, NULL);
    until_waiters(1);
    CHECK_EQ(cap_thread_cancel(w), 0);
    CHECK(join(w) == CAP_CANCELED);
    CHECK_EQ(sem_waiters_counted(sem), 0);

    /* A timeout on either clock, not before the deadline. */
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 20);
    CHECK_EQ(cap_sem_clockwait(sem, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    abs = ts_after(CLOCK_REALTIME, 20);
    CHECK_EQ(cap_sem_timedwait(sem, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    CHECK_EQ(sem_waiters_counted(sem), 0);
    CHECK_EQ(cap_sem_getvalue(sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(cap_sem_destroy(sem), 0);
    CHECK_EQ(munmap(sem, sizeof *sem), 0);
    return 0;
}

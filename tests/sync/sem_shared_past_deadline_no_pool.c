/* SPDX-License-Identifier: MIT */
/* Description: a timed wait on a process-shared semaphore whose deadline
 * has already passed (either clock, a time before the epoch too) and
 * that finds no unit times out on the caller's thread (at once, or, for
 * a deadline within the timer slack, at its end: see
 * shared_short_timeout_sleeps_slack), as a process-private one does: it
 * takes no kernel thread of the offload pool. Before, each such wait was queued for the pool, which started a
 * thread for the first one, and took a round trip there (a loop of them
 * cost 15 to 30 times a private one's). A unit that is there is taken. */
#include <sys/mman.h>

#include "proc_util.h"
#include "util.h"

static cap_sem_t *sem;

int main(void)
{
    sem = mmap(NULL, sizeof *sem, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sem != MAP_FAILED);
    CHECK_EQ(cap_sem_init(sem, 1, 0), 0);

    int before = process_tasks();
    const struct timespec epoch = { 0, 0 }, before_epoch = { -1, 0 };
    for (int i = 0; i < 1000; i++) {
        struct timespec past = ts_after(CLOCK_REALTIME, -1000);
        CHECK_EQ(cap_sem_timedwait(sem, &past), ETIMEDOUT);
        CHECK_EQ(cap_sem_timedwait(sem, &epoch), ETIMEDOUT);
        CHECK_EQ(cap_sem_timedwait(sem, &before_epoch), ETIMEDOUT);
        past = ts_now(CLOCK_MONOTONIC);
        CHECK_EQ(cap_sem_clockwait(sem, CLOCK_MONOTONIC, &past), ETIMEDOUT);
        CHECK_EQ(cap_sem_clockwait(sem, CLOCK_MONOTONIC, &epoch), ETIMEDOUT);
    }
    CHECK_EQ(process_tasks(), before); /* no pool thread was started */

    CHECK_EQ(cap_sem_post(sem), 0);
    CHECK_EQ(cap_sem_timedwait(sem, &epoch), 0);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_waiters_counted(sem), 0u);
    CHECK_EQ(cap_sem_destroy(sem), 0);
    CHECK_EQ(munmap(sem, sizeof *sem), 0);
    return 0;
}

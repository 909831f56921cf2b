/* SPDX-License-Identifier: MIT */
/* Description: glibc's sem_timedwait and sem_clockwait on a user thread
 * refuse a deadline with tv_nsec out of range (-1 with errno EINVAL) even
 * when the semaphore has a unit to take, and take none, as glibc's check
 * the deadline before the value: for a process-private semaphore and a
 * process-shared one, for both clocks; an unknown clock is refused the
 * same way. A well-formed deadline in the past still takes the unit. */
#include <semaphore.h>
#include <time.h>

#include "util.h"

int *cap_errno_location(void);
#undef errno
#define errno (*cap_errno_location())

static void refused(sem_t *s, int rc)
{
    CHECK_EQ(rc, -1);
    CHECK_EQ(errno, EINVAL);
    int v = -1;
    CHECK_EQ(sem_getvalue(s, &v), 0);
    CHECK_EQ(v, 1); /* the unit is still there */
}

int main(void)
{
    const struct timespec too_big = { 0, 1000000000 }, negative = { 0, -1 }, past = { 0, 0 };
    for (int pshared = 0; pshared < 2; pshared++) {
        sem_t s;
        CHECK_EQ(sem_init(&s, pshared, 1), 0);
        refused(&s, sem_timedwait(&s, &too_big));
        refused(&s, sem_timedwait(&s, &negative));
        refused(&s, sem_clockwait(&s, CLOCK_MONOTONIC, &too_big));
        refused(&s, sem_clockwait(&s, CLOCK_REALTIME, &negative));
        refused(&s, sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &past));
        CHECK_EQ(sem_timedwait(&s, &past), 0); /* well formed: the unit is taken */
        CHECK_EQ(sem_trywait(&s), -1);
        CHECK_EQ(errno, EAGAIN);
        CHECK_EQ(sem_destroy(&s), 0);
    }
    return 0;
}

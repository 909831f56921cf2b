/* SPDX-License-Identifier: MIT */
/* Description: clock_nanosleep on the process's CPU-time clock, which a
 * user thread cannot sleep on (ENOTSUP, docs/pthread-compat.md), returns
 * 0 at once for a time the clock has already reached, as Linux does
 * (relative 0, absolute 0 or now): it said ENOTSUP. The kernel's checks
 * come first (EINVAL for a bad time), and a time still ahead is ENOTSUP. */
#include <time.h>

#include "io/io_util.h"

int main(void)
{
    struct timespec zero = { 0, 0 };
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &zero, NULL), 0);
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, &zero, NULL), 0);
    struct timespec now;
    CHECK_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now), 0);
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, &now, NULL), 0);
    clockid_t mine;
    CHECK_EQ(clock_getcpuclockid(0, &mine), 0);
    CHECK_EQ(clock_nanosleep(mine, 0, &zero, NULL), 0);

    struct timespec bad = { 0, 1000000000 };
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &bad, NULL), EINVAL);
    struct timespec ahead = { 3600, 0 };
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &ahead, NULL), ENOTSUP);
    CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &zero, NULL), EINVAL);
    return 0;
}

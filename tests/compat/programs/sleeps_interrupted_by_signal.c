/* SPDX-License-Identifier: MIT */
/* Description: a caught signal (handler without SA_RESTART) interrupts
 * sleep, usleep, nanosleep and clock_nanosleep: sleep returns the seconds
 * left, usleep -1/EINTR, nanosleep -1/EINTR with the time left in rem,
 * clock_nanosleep EINTR (relative: rem filled; absolute: rem untouched).
 * A periodic 20 ms timer keeps firing, so every 30 s sleep is cut short
 * whatever the scheduling; the test's own timeout catches one that is not.
 * Built with <capriccio/pthread.h> the sleeps used to be inline shims that
 * no signal could interrupt. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t caught;

static void on_alarm(int sig)
{
    (void)sig;
    caught++;
}

static void timer_every(long usec)
{
    struct itimerval it = { { 0, usec }, { 0, usec } };
    EXPECT_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

int main(void)
{
    install_handler(SIGALRM, on_alarm, 0); /* no SA_RESTART: sleeps return EINTR in any case */
    timer_every(20000);

    unsigned left = sleep(30);
    EXPECT(left > 0 && left <= 30);

    errno = 0;
    EXPECT_EQ(usleep(30000000), -1);
    EXPECT_EQ(errno, EINTR);

    struct timespec req = { 30, 0 }, rem = { -1, -1 };
    errno = 0;
    EXPECT_EQ(nanosleep(&req, &rem), -1);
    EXPECT_EQ(errno, EINTR);
    EXPECT(rem.tv_sec >= 0 && rem.tv_sec <= 30 && rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000L);
    EXPECT(rem.tv_sec > 0 || rem.tv_nsec > 0);

    rem = (struct timespec){ -1, -1 };
    EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem), EINTR);
    EXPECT(rem.tv_sec >= 0 && rem.tv_sec <= 30 && rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000L);

    struct timespec abs;
    EXPECT_EQ(clock_gettime(CLOCK_MONOTONIC, &abs), 0);
    abs.tv_sec += 30;
    rem = (struct timespec){ -1, -1 };
    EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, &rem), EINTR);
    EXPECT(rem.tv_sec == -1 && rem.tv_nsec == -1);

    timer_every(0);
    EXPECT(caught >= 5);
    return 0;
}

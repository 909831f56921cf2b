/* SPDX-License-Identifier: MIT */
/* Description: a sleep() cut short by a signal handler returns the whole
 * seconds left and leaves errno at EINTR, as glibc's does (its nanosleep's
 * error); errno was left unchanged. */
#include <sys/time.h>

#include "io/io_util.h"

static atomic_int fired;

static void on_alarm(int sig)
{
    (void)sig;
    atomic_store(&fired, 1);
}

int main(void)
{
    install_handler(SIGALRM, on_alarm, 0);
    struct itimerval it = { { 0, 0 }, { 0, 50000 } }; /* 50 ms */
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    errno = 0;
    unsigned left = sleep(3);
    CHECK_EQ(atomic_load(&fired), 1);
    CHECK(left >= 1 && left <= 3);
    CHECK_EQ(errno, EINTR);
    errno = 0;
    CHECK_EQ(sleep(0), 0); /* an uninterrupted one leaves errno alone */
    CHECK_EQ(errno, 0);
    return 0;
}

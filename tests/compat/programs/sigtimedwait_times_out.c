/* SPDX-License-Identifier: MIT */
/* Description: sigtimedwait on a blocked signal that nobody sends times
 * out with EAGAIN, first thing in main: no spurious EINTR (the library's
 * start-up once left one pending for main's next blocking call). */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "check.h"

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    EXPECT_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
    for (int i = 0; i < 3; i++) {
        struct timespec ts = { 0, 20000000L };
        errno = 0;
        EXPECT_EQ(sigtimedwait(&set, NULL, &ts), -1);
        EXPECT_EQ(errno, EAGAIN);
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: sighold, sigrelse and the X/Open sigpause refuse glibc's
 * two internal signals (32 and 33) with EINVAL, as glibc's do (its
 * sigaddset and sigdelset refuse them), as they refuse 0 and 65. They
 * returned 0 without changing anything, and sigpause(32) suspended the
 * thread with its mask unchanged instead of failing at once. Ordinary
 * signals still work: sighold blocks, sigrelse unblocks, sigpause waits
 * for a signal with it unblocked. */
#define _XOPEN_SOURCE 700
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* the calls under test */
#include <signal.h>
#include <unistd.h>

#include "io/io_util.h"

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static int blocked(int sig)
{
    sigset_t cur;
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
    return sigismember(&cur, sig);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);

    const int bad[] = { 0, 32, 33, 65 };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_EQ(sighold(bad[i]), -1);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(sigrelse(bad[i]), -1);
        CHECK_EQ(errno, EINVAL);
    }
    /* A wait that should not begin: an alarm ends it if it does. */
    alarm(5);
    errno = 0;
    CHECK_EQ(sigpause(32), -1);
    CHECK_EQ(errno, EINVAL);
    alarm(0);
    CHECK_EQ(alarms, 0);

    CHECK_EQ(sighold(SIGALRM), 0);
    CHECK_EQ(blocked(SIGALRM), 1);
    CHECK_EQ(raise(SIGALRM), 0);
    CHECK_EQ(alarms, 0);
    errno = 0;
    CHECK_EQ(sigpause(SIGALRM), -1); /* the pending one ends it */
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(alarms, 1);
    CHECK_EQ(blocked(SIGALRM), 1);
    CHECK_EQ(sigrelse(SIGALRM), 0);
    CHECK_EQ(blocked(SIGALRM), 0);
    return 0;
}

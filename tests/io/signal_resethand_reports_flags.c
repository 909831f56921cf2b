/* SPDX-License-Identifier: MIT */
/* Description: after a handler installed with SA_RESETHAND has run, the
 * kernel has put SIG_DFL back; sigaction reports SIG_DFL with the
 * program's own flags, as glibc's does (it showed the SA_SIGINFO that the
 * library's trampoline is installed with), for a plain handler and for an
 * SA_SIGINFO one. */
#include <signal.h>
#include <string.h>

#include "io/io_util.h"

static volatile sig_atomic_t ran;

static void plain(int sig)
{
    (void)sig;
    ran++;
}

static void info(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si, (void)ctx;
    ran++;
}

static void once(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | flags;
    if (flags & SA_SIGINFO)
        sa.sa_sigaction = info;
    else
        sa.sa_handler = plain;
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    ran = 0;
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(ran, 1);
    struct sigaction now;
    CHECK_EQ(sigaction(SIGUSR1, NULL, &now), 0);
    CHECK(now.sa_handler == SIG_DFL);
    CHECK_EQ(now.sa_flags & (SA_RESETHAND | SA_SIGINFO), SA_RESETHAND | flags);
}

int main(void)
{
    once(0);
    once(SA_SIGINFO);
    return 0;
}

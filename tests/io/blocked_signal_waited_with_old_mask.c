/* SPDX-License-Identifier: MIT */
/* Description: the classic way to wait for a signal without a race, block
 * it, then wait with a mask that lets it in (sigsuspend, pselect, ppoll,
 * epoll_pwait, X/Open's sigpause), gets the signal: each call returns EINTR after exactly
 * one run of the handler. A signal sent while it is blocked (by the only
 * thread: so by every worker, io/sigmask.h) and no such call waits stays
 * pending, also while the other workers sleep; and one the call's own
 * mask blocks does not end it (its timeout does). Once, on one worker,
 * the pending signal was never delivered (nginx's master, which waits
 * so, ignored SIGTERM); with more workers the others did not block it and
 * ran the handler at once. */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "io/io_util.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *send_later(void *arg)
{
    (void)arg;
    cap_sleep_ns(10000000);
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    return NULL;
}

enum { SUSPEND, PSELECT, PPOLL, EPOLL_PWAIT, SIGPAUSE, KINDS };

/* Waits in `kind` with the mask `old` (SIGUSR1 let in), a pipe that never
 * becomes ready and no timeout: only the signal ends it. */
static void wait_for_signal(int kind, const sigset_t *old, int rfd, int epfd)
{
    int r;
    errno = 0;
    if (kind == SUSPEND) {
        r = sigsuspend(old);
    } else if (kind == PSELECT) {
        fd_set rs;
        FD_ZERO(&rs);
        FD_SET(rfd, &rs);
        r = pselect(rfd + 1, &rs, NULL, NULL, NULL, old);
    } else if (kind == PPOLL) {
        struct pollfd p = { .fd = rfd, .events = POLLIN };
        r = ppoll(&p, 1, NULL, old);
    } else if (kind == EPOLL_PWAIT) {
        struct epoll_event ev;
        r = epoll_pwait(epfd, &ev, 1, -1, old);
    } else {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        r = sigpause(SIGUSR1); /* X/Open's: the thread's mask less SIGUSR1 */
#pragma GCC diagnostic pop
    }
    CHECK_EQ(r, -1);
    CHECK_EQ(errno, EINTR);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    int epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = p[0] };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, p[0], &ev), 0);

    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (int kind = 0; kind < KINDS; kind++) {
        /* Sent before the wait, while blocked: pending until the wait. */
        handled = 0;
        CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(10000000); /* the workers sleep with it blocked */
        CHECK_EQ(handled, 0);
        wait_for_signal(kind, &old, p[0], epfd);
        CHECK_EQ(handled, 1);
        CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);

        /* Sent by another thread while the call waits. */
        handled = 0;
        CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
        cap_thread_t t = spawn(send_later, NULL);
        wait_for_signal(kind, &old, p[0], epfd);
        join(t);
        CHECK_EQ(handled, 1);
        CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
    }

    /* A call whose own mask blocks it is not ended by it. */
    handled = 0;
    CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    struct timespec ten_ms = { 0, 10000000 };
    CHECK_EQ(ppoll(&pf, 1, &ten_ms, &usr1), 0);
    CHECK_EQ(handled, 0);
    wait_for_signal(SUSPEND, &old, p[0], epfd); /* then taken */
    CHECK_EQ(handled, 1);
    CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
    puts("ok");
    return 0;
}

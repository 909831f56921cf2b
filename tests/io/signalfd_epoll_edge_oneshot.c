/* SPDX-License-Identifier: MIT */
/* Description: a signalfd registered in an epoll set with EPOLLET is
 * reported once for a signal sent to the waiting thread itself (raise,
 * pthread_kill), not again while it stays pending unread, nor for a send
 * of the same signal merged into the pending one, and once more for a
 * new signal or a send after a read took it (also to a wait parked on the
 * set); one registered with EPOLLONESHOT is reported once, then not
 * until EPOLL_CTL_MOD re-arms it, with the data given then. As NPTL's.
 * Before, such a signal was never reported: every wait said 0, and the
 * parked one stayed parked (the watchdog ended the test). */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 100 };

static int sfd, ep;
static atomic_int waiting, got;

static int wait_now(uint64_t *data)
{
    struct epoll_event ev[4];
    memset(ev, 0, sizeof ev);
    int n = epoll_wait(ep, ev, 4, 0);
    if (n == 1) {
        CHECK_EQ(ev[0].events, (uint32_t)EPOLLIN);
        *data = ev[0].data.u64;
    }
    return n;
}

/* Reads every signal the signalfd has for this thread. */
static void drain(void)
{
    struct signalfd_siginfo si[4];
    CHECK_GT(read(sfd, si, sizeof si), 0);
    CHECK_EQ(read(sfd, si, sizeof si), -1);
    CHECK_EQ(errno, EAGAIN);
}

static void arm(int op, uint32_t events, uint64_t data)
{
    struct epoll_event e = { .events = events, .data.u64 = data };
    CHECK_EQ(epoll_ctl(ep, op, sfd, &e), 0);
}

static void *waiter(void *arg)
{
    (void)arg;
    uint64_t d = 0;
    arm(EPOLL_CTL_ADD, EPOLLIN | EPOLLET, 7);
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(wait_now(&d), 1);
    CHECK_EQ(d, (uint64_t)7);
    CHECK_EQ(wait_now(&d), 0); /* pending, unread: no new edge */
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(wait_now(&d), 0); /* merged into the pending one */
    CHECK_EQ(raise(SIGUSR2), 0);
    CHECK_EQ(wait_now(&d), 1); /* a new signal */
    CHECK_EQ(wait_now(&d), 0);
    drain();
    CHECK_EQ(raise(SIGUSR1), 0); /* a send after the read: a new edge */
    CHECK_EQ(wait_now(&d), 1);
    CHECK_EQ(wait_now(&d), 0);
    drain();

    arm(EPOLL_CTL_MOD, EPOLLIN | EPOLLONESHOT, 9);
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(wait_now(&d), 1);
    CHECK_EQ(d, (uint64_t)9);
    CHECK_EQ(wait_now(&d), 0); /* fired: disarmed */
    CHECK_EQ(raise(SIGUSR2), 0);
    CHECK_EQ(wait_now(&d), 0);
    arm(EPOLL_CTL_MOD, EPOLLIN | EPOLLONESHOT, 10);
    CHECK_EQ(wait_now(&d), 1);
    CHECK_EQ(d, (uint64_t)10);
    CHECK_EQ(wait_now(&d), 0);
    drain();

    /* Edge-triggered and parked: each send wakes it once. */
    arm(EPOLL_CTL_MOD, EPOLLIN | EPOLLET, 11);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&waiting, i + 1);
        struct epoll_event ev[4];
        memset(ev, 0, sizeof ev);
        CHECK_EQ(epoll_wait(ep, ev, 4, -1), 1);
        CHECK_EQ(ev[0].data.u64, (uint64_t)11);
        CHECK_EQ(wait_now(&d), 0);
        drain();
        atomic_store(&got, i + 1);
    }
    return NULL;
}

int main(void)
{
    alarm(50); /* a wait never woken ends the test */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0); /* the waiter inherits it */
    sfd = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(sfd, 0);
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK_GE(ep, 0);
    cap_thread_t t = spawn(waiter, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        send_when_waiting(t, i % 2 ? SIGUSR1 : SIGUSR2, &waiting, i);
        wait_past(&got, i);
    }
    join(t);
    CHECK_EQ(close(ep), 0);
    CHECK_EQ(close(sfd), 0);
    puts("ok");
    return 0;
}

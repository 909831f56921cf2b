/* SPDX-License-Identifier: MIT */
/* Description: a thread parked in a read, a poll or a select of a
 * signalfd sees the mask another thread gives the signalfd meanwhile
 * (signalfd(fd, mask, 0)), as on NPTL: the signalfd's mask was SIGUSR1,
 * becomes SIGUSR2, and the reader, which blocks both, is sent SIGUSR1
 * and then SIGUSR2. The wait must return SIGUSR2 (the read its record),
 * and SIGUSR1, no longer in the mask, must stay pending for the thread.
 * Each round sends them whether the reader has parked yet or not.
 * Before, the wait stayed parked (the watchdog ended the test): it was
 * woken only by the signals of the mask it read as it parked. */
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 150 };

static int fd;
static atomic_int reading, got;

static void wait_readable(int mode)
{
    if (mode == 1) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        CHECK_EQ(poll(&p, 1, -1), 1);
        CHECK_EQ(p.revents, POLLIN);
    } else if (mode == 2) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(fd, &r);
        CHECK_EQ(select(fd + 1, &r, NULL, NULL, NULL), 1);
        CHECK(FD_ISSET(fd, &r));
    }
}

static void *reader(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&reading, i + 1);
        wait_readable(i % 3); /* 0: the read parks itself */
        struct signalfd_siginfo si;
        CHECK_EQ(read(fd, &si, sizeof si), (ssize_t)sizeof si);
        CHECK_EQ(si.ssi_signo, (uint32_t)SIGUSR2);
        sigset_t p;
        CHECK_EQ(sigpending(&p), 0);
        CHECK_EQ(sigismember(&p, SIGUSR2), 0);
        CHECK_EQ(sigismember(&p, SIGUSR1), 1);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, SIGUSR1);
        CHECK_EQ(sigwaitinfo(&one, NULL), SIGUSR1);
        atomic_store(&got, i + 1);
    }
    return NULL;
}

static void set_mask(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK_EQ(signalfd(fd, &s, 0), fd);
}

int main(void)
{
    alarm(50); /* a wait never woken ends the test */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    fd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    cap_thread_t r = spawn(reader, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load(&reading) <= i)
            cap_sleep_ns(100000);
        /* Every other round, give the reader time to park first. */
        if (i % 2 == 0)
            cap_sleep_ns(1000000);
        set_mask(SIGUSR2);
        CHECK_EQ(cap_thread_kill(r, SIGUSR1), 0);
        CHECK_EQ(cap_thread_kill(r, SIGUSR2), 0);
        while (atomic_load(&got) <= i)
            cap_sleep_ns(100000);
        set_mask(SIGUSR1);
    }
    join(r);
    CHECK_EQ(close(fd), 0);
    puts("ok");
    return 0;
}

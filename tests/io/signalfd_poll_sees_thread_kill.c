/* SPDX-License-Identifier: MIT */
/* Description: poll, ppoll and select report a signalfd readable while a
 * signal of its mask is pending for the polling thread itself (raise,
 * pthread_kill), as NPTL's do, and no longer once a read took it; and a
 * poll parked on the signalfd is woken by pthread_kill of its thread
 * with such a signal (which it blocks), whether it had parked yet or
 * not, and the read that follows returns it. Before, the signalfd never
 * became readable for such a signal: the poll with a timeout said 0 and
 * the one without stayed parked (the watchdog ended the test). */
#include <signal.h>
#include <sys/select.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 200 };

static int fd;
static atomic_int polling, got;

static void take_one(int sig)
{
    struct signalfd_siginfo si;
    CHECK_EQ(read(fd, &si, sizeof si), (ssize_t)sizeof si);
    CHECK_EQ(si.ssi_signo, (uint32_t)sig);
    CHECK_EQ(si.ssi_code, SI_TKILL);
}

static void *poller(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    struct pollfd p = { .fd = fd, .events = POLLIN };

    CHECK_EQ(poll(&p, 1, 0), 0);
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(poll(&p, 1, 0), 1);
    CHECK_EQ(p.revents, POLLIN);
    struct timespec zero = { 0, 0 };
    sigset_t none;
    sigemptyset(&none);
    sigaddset(&none, SIGUSR1); /* ppoll's mask keeps it blocked */
    p.revents = 0;
    CHECK_EQ(ppoll(&p, 1, &zero, &none), 1);
    CHECK_EQ(p.revents, POLLIN);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    struct timeval tv = { 0, 0 };
    CHECK_EQ(select(fd + 1, &rd, NULL, NULL, &tv), 1);
    CHECK(FD_ISSET(fd, &rd));
    take_one(SIGUSR1);
    CHECK_EQ(poll(&p, 1, 0), 0);

    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&polling, i + 1);
        p.revents = 0;
        CHECK_EQ(poll(&p, 1, -1), 1);
        CHECK_EQ(p.revents, POLLIN);
        take_one(SIGUSR1);
        atomic_store(&got, i + 1);
    }
    return NULL;
}

int main(void)
{
    alarm(50); /* a poll never woken ends the test */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    fd = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    cap_thread_t t = spawn(poller, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        send_when_waiting(t, SIGUSR1, &polling, i);
        wait_past(&got, i);
    }
    join(t);
    CHECK_EQ(close(fd), 0);
    puts("ok");
    return 0;
}

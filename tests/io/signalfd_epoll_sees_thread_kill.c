/* SPDX-License-Identifier: MIT */
/* Description: an epoll set holding a signalfd reports it (EPOLLIN, the
 * registration's epoll_data) to epoll_wait, epoll_pwait and epoll_pwait2
 * while a signal of its mask is pending for the waiting thread itself
 * (raise, pthread_kill), at every wait (level-triggered) until a read
 * takes it, as NPTL's do: also through a dup of the set made before the
 * signalfd was added, and among hundreds of registrations; never beyond
 * maxevents, after the kernel's events, and once only when the kernel
 * reports the signalfd too (a process-directed signal of its mask is
 * pending as well). A wait parked on the set is woken by pthread_kill of
 * its thread with such a signal (which it blocks), whether it had parked
 * yet or not. Before, the set never reported such a signal: the waits
 * said 0, and the parked ones stayed parked (the watchdog ended the
 * test). */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 150, MANY = 200 };
#define SFD_DATA UINT64_C(0x1234567890abcdef)
#define PIPE_DATA UINT64_C(42)

static int sfd, ep, ep_dup; /* ep_dup: a dup of the set made before the add */
static atomic_int waiting, got;

static void take_one(int sig, int code)
{
    struct signalfd_siginfo si;
    CHECK_EQ(read(sfd, &si, sizeof si), (ssize_t)sizeof si);
    CHECK_EQ(si.ssi_signo, (uint32_t)sig);
    CHECK_EQ(si.ssi_code, code);
}

/* The first of ev[0, n) with data d, or NULL. */
static struct epoll_event *find(struct epoll_event *ev, int n, uint64_t d)
{
    for (int i = 0; i < n; i++)
        if (ev[i].data.u64 == d)
            return &ev[i];
    return NULL;
}

/* One wait of each kind that does not park, and one through the dup:
 * all see the signalfd alone. */
static void sees_it_now(void)
{
    struct epoll_event ev[4];
    struct timespec zero = { 0, 0 };
    sigset_t keep;
    sigemptyset(&keep);
    sigaddset(&keep, SIGUSR1); /* the call's mask keeps it blocked */
    for (int k = 0; k < 4; k++) {
        memset(ev, 0, sizeof ev);
        int n = k == 0   ? epoll_wait(ep, ev, 4, 0)
                : k == 1 ? epoll_pwait(ep, ev, 4, 0, &keep)
                : k == 2 ? epoll_pwait2(ep, ev, 4, &zero, &keep)
                         : epoll_wait(ep_dup, ev, 4, 0);
        CHECK_EQ(n, 1);
        CHECK_EQ(ev[0].events, (uint32_t)EPOLLIN);
        CHECK_EQ(ev[0].data.u64, SFD_DATA);
    }
}

static void *waiter(void *arg)
{
    (void)arg;
    struct epoll_event ev[4];
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 0);
    CHECK_EQ(raise(SIGUSR1), 0);
    sees_it_now(); /* and again: level-triggered */
    sees_it_now();
    take_one(SIGUSR1, SI_TKILL);
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 0);

    /* Beside a ready pipe: never past maxevents, the kernel's event
     * first; the next wait gets both. */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = PIPE_DATA };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e), 0);
    CHECK_EQ(write(p[1], "x", 1), 1);
    CHECK_EQ(cap_thread_kill(cap_thread_self(), SIGUSR1), 0);
    memset(ev, 0, sizeof ev);
    CHECK_EQ(epoll_wait(ep, ev, 1, 0), 1);
    CHECK_EQ(ev[0].data.u64, PIPE_DATA);
    CHECK_EQ(ev[1].data.u64, (uint64_t)0); /* nothing past maxevents */
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 2);
    CHECK(find(ev, 2, PIPE_DATA) != NULL);
    CHECK(find(ev, 2, SFD_DATA) != NULL);
    CHECK_EQ(find(ev, 2, SFD_DATA)->events, (uint32_t)EPOLLIN);
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);

    /* Among many registrations (the runtime reads them from the set's
     * fdinfo, several pages of it): still found, once. */
    int many[MANY][2];
    for (int i = 0; i < MANY; i++) {
        CHECK_EQ(pipe(many[i]), 0);
        e = (struct epoll_event){ .events = EPOLLIN, .data.u64 = PIPE_DATA + 1 + (uint64_t)i };
        CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, many[i][0], &e), 0);
    }
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 1);
    CHECK_EQ(ev[0].data.u64, SFD_DATA);
    for (int i = 0; i < MANY; i++) {
        CHECK_EQ(close(many[i][0]), 0);
        CHECK_EQ(close(many[i][1]), 0);
    }

    /* The kernel sees a process-directed SIGUSR2 (every thread blocks
     * it) on the same signalfd: one event for it, not two. */
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 1);
    CHECK_EQ(ev[0].data.u64, SFD_DATA);
    take_one(SIGUSR1, SI_TKILL); /* the thread's own first */
    take_one(SIGUSR2, SI_USER);
    CHECK_EQ(epoll_wait(ep, ev, 4, 0), 0);

    /* Parked, then woken by the send, each kind in turn. */
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&waiting, i + 1);
        memset(ev, 0, sizeof ev);
        int n = i % 3 == 0   ? epoll_wait(ep, ev, 4, -1)
                : i % 3 == 1 ? epoll_pwait(ep, ev, 4, -1, NULL)
                             : epoll_pwait2(ep, ev, 4, NULL, NULL);
        CHECK_EQ(n, 1);
        CHECK_EQ(ev[0].events, (uint32_t)EPOLLIN);
        CHECK_EQ(ev[0].data.u64, SFD_DATA);
        take_one(SIGUSR1, SI_TKILL);
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
    /* Blocked here too, so that every thread blocks them (the waiter
     * inherits the mask). */
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    sfd = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(sfd, 0);
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK_GE(ep, 0);
    ep_dup = dup(ep);
    CHECK_GE(ep_dup, 0);
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = SFD_DATA };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e), 0);
    cap_thread_t t = spawn(waiter, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        send_when_waiting(t, SIGUSR1, &waiting, i);
        wait_past(&got, i);
    }
    join(t);
    CHECK_EQ(close(ep_dup), 0);
    CHECK_EQ(close(ep), 0);
    CHECK_EQ(close(sfd), 0);
    puts("ok");
    return 0;
}

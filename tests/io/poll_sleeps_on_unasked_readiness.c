/* SPDX-License-Identifier: MIT */
/* Description: a poll() or select() that asks for events a descriptor
 * does not have sleeps until its timeout even while the descriptor has
 * others it did not ask for: POLLPRI alone (select's exceptfds), POLLRDHUP
 * alone or no events at all on a socket or a pipe with unread data.
 * CAP_NETIO=poll asked the kernel for POLLIN on behalf of every read-side
 * poller, and so did CAP_NETIO=uring for the pipes the runtime makes
 * (their one-shot polls): ppoll returned, or the poll ended, at once,
 * again and again, and the poller was woken for nothing until its
 * timeout, burning the CPU. A wait that sleeps uses
 * (well under a millisecond) whatever the load; one that spins uses
 * what CPU it gets (half of the wait on a busy two-core machine), so the
 * check is the CPU time a 200 ms wait used: under a tenth of it (load can
 * only lower the figure of a spinning run, never raise a sleeping one's).
 * The events asked for still arrive: urgent data wakes the POLLPRI
 * poller, the peer's close the one that asked for nothing. */
#include <poll.h>
#include <sys/select.h>
#include <time.h>

#include "io/io_util.h"

enum { WAIT_MS = 200 };

static int64_t cpu_ns(void)
{
    struct timespec ts;
    CHECK_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One wait of WAIT_MS for something that does not come: how: 0 poll
 * for POLLPRI, 1 select's exceptfds, 2 poll for POLLRDHUP, 3 poll for no
 * events. */
static void quiet_wait(int fd, int how)
{
    int64_t before = cpu_ns();
    if (how == 1) {
        fd_set e;
        FD_ZERO(&e);
        FD_SET(fd, &e);
        struct timeval tv = { 0, WAIT_MS * 1000 };
        CHECK_EQ(select(fd + 1, NULL, NULL, &e, &tv), 0);
    } else {
        short ev = how == 0 ? POLLPRI : how == 2 ? POLLRDHUP : 0;
        struct pollfd p = { .fd = fd, .events = ev };
        CHECK_EQ(poll(&p, 1, WAIT_MS), 0);
        CHECK_EQ(p.revents, 0);
    }
    int64_t used = cpu_ns() - before;
    if (used >= (int64_t)WAIT_MS * 1000000 / 10)
        fprintf(stderr, "wait %d used %lld ms of CPU in %d ms\n", how,
                (long long)(used / 1000000), WAIT_MS);
    CHECK_LT(used, (int64_t)WAIT_MS * 1000000 / 10);
}

static int urgent_to;

static void *send_urgent(void *arg)
{
    (void)arg;
    cap_usleep(20000);
    CHECK_EQ(send(urgent_to, "!", 1, MSG_OOB), 1);
    return NULL;
}

static void *close_later(void *arg)
{
    cap_usleep(20000);
    CHECK_EQ(close((int)(intptr_t)arg), 0);
    return NULL;
}

int main(void)
{
    alarm(30); /* a lost wake-up below would hang */
    int port;
    int l = tcp_listener(SOCK_STREAM, 1, &port);
    int a = tcp_connect(port);
    CHECK_GE(a, 0);
    int b = accept(l, NULL, NULL);
    CHECK_GE(b, 0);
    /* Unread data on b, read-side readiness nobody below asks for. */
    CHECK_EQ(send(a, "data", 4, 0), 4);
    struct pollfd in = { .fd = b, .events = POLLIN };
    CHECK_EQ(poll(&in, 1, -1), 1);

    for (int how = 0; how < 4; how++)
        quiet_wait(b, how);

    /* What they ask for still wakes them. */
    urgent_to = a;
    cap_thread_t t = spawn(send_urgent, NULL);
    struct pollfd p = { .fd = b, .events = POLLPRI };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK_EQ(p.revents, POLLPRI);
    join(t);
    char c;
    CHECK_EQ(recv(b, &c, 1, MSG_OOB), 1);
    CHECK_EQ(c, '!');

    int pv[2];
    CHECK_EQ(pipe(pv), 0);
    CHECK_EQ(write(pv[1], "x", 1), 1);
    for (int how = 0; how < 4; how++)
        quiet_wait(pv[0], how);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(write(sv[1], "x", 1), 1);
    quiet_wait(sv[0], 3);
    t = spawn(close_later, (void *)(intptr_t)sv[1]);
    p = (struct pollfd){ .fd = sv[0], .events = 0 };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK(p.revents & POLLHUP);
    join(t);
    return 0;
}

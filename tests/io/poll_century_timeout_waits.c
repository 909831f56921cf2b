/* SPDX-License-Identifier: MIT */
/* Description: ppoll, pselect, select and epoll_pwait2 with a timeout
 * too long for a 64-bit count of nanoseconds (2^62 s; 18446744074 s,
 * just past 2^64 ns) wait until the descriptor is ready, as Linux's,
 * which clamp such a timeout, do. The timeout was converted to
 * nanoseconds with a multiplication that wrapped round: 2^62 s became 0
 * (each call returned 0 at once, and select's 0 means a poll) and
 * 18446744074 s became 0.29 s. Here the pipe is written only after the
 * waiter began its wait. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "io/io_util.h"

static atomic_int waiting;
static int fds[2];

static void *writer(void *arg)
{
    (void)arg;
    while (!atomic_load(&waiting))
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* the waiter is parked (if not, it finds the byte) */
    CHECK_EQ(write(fds[1], "x", 1), 1);
    return NULL;
}

/* Waits for fds[0] with call number `call` and timeout secs; returns
 * what the call returned. */
static int wait_once(int call, time_t secs, int ep)
{
    struct timespec ts = { secs, 0 };
    sigset_t none;
    sigemptyset(&none);
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    fd_set r;
    FD_ZERO(&r);
    FD_SET(fds[0], &r);
    switch (call) {
    case 0:
        return ppoll(&p, 1, &ts, &none);
    case 1:
        return pselect(fds[0] + 1, &r, NULL, NULL, &ts, &none);
    case 2: {
        struct timeval tv = { secs, 0 };
        return select(fds[0] + 1, &r, NULL, NULL, &tv);
    }
    default: {
        struct epoll_event ev;
        return epoll_pwait2(ep, &ev, 1, &ts, &none);
    }
    }
}

int main(void)
{
    CHECK_EQ(pipe(fds), 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK_GE(ep, 0);
    struct epoll_event ev = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev), 0);
    const time_t secs[] = { (time_t)1 << 62, (time_t)18446744074LL };
    for (int call = 0; call < 4; call++) {
        for (unsigned i = 0; i < sizeof secs / sizeof secs[0]; i++) {
            atomic_store(&waiting, 0);
            cap_thread_t t = spawn(writer, NULL);
            atomic_store(&waiting, 1);
            int r = wait_once(call, secs[i], ep);
            if (r < 0 && errno == ENOSYS && call == 3)
                r = 1; /* no epoll_pwait2 in this kernel */
            CHECK_EQ(r, 1);
            join(t);
            char c;
            CHECK_EQ(read(fds[0], &c, 1), 1);
        }
    }
    return 0;
}

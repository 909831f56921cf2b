/* SPDX-License-Identifier: MIT */
/* Description: a writer parked on a full pipe while another thread
 * polls the same write end for a hang-up (events 0, as a supervisor
 * waits for its reader to go away) is woken when the pipe is drained
 * where the wrappers do not see it (raw read system calls; the poll made
 * the pipe non-private, io/pipe.h). With CAP_NETIO=uring the pipe's
 * one-shot poll was armed for the poller's read-side events and a waiter
 * of the other direction did not widen it: POLLOUT never ended it, and
 * the writer slept for good. The poller still sees the reader's close. */
#include <string.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { TOTAL = 1 << 20 };

static int p[2];

static void *hangup_poller(void *arg)
{
    (void)arg;
    struct pollfd q = { .fd = p[1], .events = 0 };
    CHECK_EQ(poll(&q, 1, -1), 1);
    CHECK(q.revents & POLLERR);
    return NULL;
}

static void *raw_drainer(void *arg)
{
    (void)arg;
    static char buf[65536];
    long got = 0;
    while (got < TOTAL) {
        long r = syscall(SYS_read, p[0], buf, sizeof buf);
        if (r > 0)
            got += r;
        else
            cap_usleep(1000); /* EAGAIN: the runtime's pipe is non-blocking underneath */
    }
    CHECK_EQ(got, TOTAL);
    return NULL;
}

int main(void)
{
    alarm(30); /* the hang this checks for */
    CHECK_EQ(pipe(p), 0);
    cap_thread_t poller = spawn(hangup_poller, NULL);
    cap_usleep(20000); /* parked first, so its poll is the one armed */
    cap_thread_t drainer = spawn(raw_drainer, NULL);
    static char big[TOTAL];
    memset(big, 'x', sizeof big);
    CHECK_EQ(write(p[1], big, sizeof big), (ssize_t)TOTAL);
    join(drainer);
    CHECK_EQ(close(p[0]), 0);
    join(poller);
    return 0;
}

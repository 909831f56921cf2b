/* SPDX-License-Identifier: MIT */
/* Description: an epoll set a thread waits on takes as deep a chain of
 * sets under it as a set nobody waited on, and the waiting thread still
 * gets the event from the bottom of the chain. With CAP_NETIO=epoll the
 * waited set is in the backend's own set too, a nesting level above it,
 * and the add failed with ELOOP where Linux takes it; now the backend
 * lets the set go and its waiter goes on waiting by polling it. */
#include <sys/epoll.h>

#include "io/io_util.h"

enum { MAX_SETS = 16 };

static int pv[2], top;

static void *wait_top(void *arg)
{
    (void)arg;
    struct epoll_event out[2];
    CHECK_EQ(epoll_wait(top, out, 2, -1), 1);
    CHECK_EQ(out[0].data.u32, 77u);
    return NULL;
}

int main(void)
{
    alarm(30); /* a waiter left behind would hang */
    CHECK_EQ(pipe(pv), 0);
    top = epoll_create1(0);
    CHECK_GE(top, 0);
    cap_thread_t waiter = spawn(wait_top, NULL);
    cap_usleep(20000); /* parked in epoll_wait: the set is watched */

    /* chain[0] watches the pipe, each next set the one before, as deep
     * as the kernel allows. */
    int chain[MAX_SETS], depth = 0;
    struct epoll_event ev = { .events = EPOLLIN };
    for (; depth < MAX_SETS; depth++) {
        chain[depth] = epoll_create1(0);
        CHECK_GE(chain[depth], 0);
        int inner = depth == 0 ? pv[0] : chain[depth - 1];
        if (epoll_ctl(chain[depth], EPOLL_CTL_ADD, inner, &ev) != 0) {
            CHECK_EQ(errno, ELOOP);
            CHECK_EQ(close(chain[depth]), 0);
            break;
        }
    }
    CHECK_GT(depth, 1);
    /* The deepest part of the chain a fresh set takes. */
    int fresh = epoll_create1(0), k = depth - 1;
    CHECK_GE(fresh, 0);
    while (k >= 0 && epoll_ctl(fresh, EPOLL_CTL_ADD, chain[k], &ev) != 0) {
        CHECK_EQ(errno, ELOOP);
        k--;
    }
    CHECK_GE(k, 0);
    CHECK_EQ(close(fresh), 0);

    /* The waited set takes it too. */
    ev.data.u32 = 77;
    CHECK_EQ(epoll_ctl(top, EPOLL_CTL_ADD, chain[k], &ev), 0);
    CHECK_EQ(write(pv[1], "x", 1), 1);
    join(waiter);
    return 0;
}

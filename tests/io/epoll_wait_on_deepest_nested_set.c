/* SPDX-License-Identifier: MIT */
/* Description: epoll_wait on an epoll set nested as deep as the kernel
 * allows keeps its timeout and is woken by a thread of the program. With
 * CAP_NETIO=epoll the backend cannot add such a set to its own (that
 * would be a level more: ELOOP), and epoll_wait then fell back to the
 * kernel's epoll_wait with no timeout at all: a 100 ms wait never
 * returned, and a wait for a write by another thread of the same worker
 * hung the program. */
#include <sys/epoll.h>

#include "io/io_util.h"

enum { MAX_SETS = 16 };

static int pv[2];

static void *write_later(void *arg)
{
    (void)arg;
    cap_usleep(20000);
    CHECK_EQ(write(pv[1], "x", 1), 1);
    return NULL;
}

int main(void)
{
    alarm(30); /* the hang this checks for */
    CHECK_EQ(pipe(pv), 0);
    /* sets[0] watches the pipe; each next one the one before, until the
     * kernel refuses a level. */
    int sets[MAX_SETS], depth = 0;
    struct epoll_event ev = { .events = EPOLLIN };
    for (; depth < MAX_SETS; depth++) {
        sets[depth] = epoll_create1(0);
        CHECK_GE(sets[depth], 0);
        int inner = depth == 0 ? pv[0] : sets[depth - 1];
        if (epoll_ctl(sets[depth], EPOLL_CTL_ADD, inner, &ev) != 0) {
            CHECK(errno == ELOOP || errno == EINVAL);
            CHECK_EQ(close(sets[depth]), 0);
            break;
        }
    }
    CHECK_GT(depth, 1);
    CHECK_LT(depth, MAX_SETS);
    int top = sets[depth - 1];

    struct epoll_event out[2];
    CHECK_EQ(epoll_wait(top, out, 2, 100), 0);

    cap_thread_t t = spawn(write_later, NULL);
    CHECK_EQ(epoll_wait(top, out, 2, -1), 1);
    join(t);
    char c;
    CHECK_EQ(read(pv[0], &c, 1), 1);
    CHECK_EQ(epoll_wait(top, out, 2, 0), 0);
    return 0;
}

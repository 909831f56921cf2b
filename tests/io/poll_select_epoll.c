/* SPDX-License-Identifier: MIT */
/* Description: poll, select and epoll_wait on a user thread park until
 * any watched descriptor is ready (the one written by another thread),
 * report exactly it, and leave the others alone; many threads polling
 * one descriptor are all woken by one event. */
#include <poll.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "io/io_util.h"

enum { FDS = 20, OBSERVERS = 50 };

static int pv[FDS][2];
static int target;
static atomic_int woken;

static void *write_later(void *arg)
{
    int fd = (int)(intptr_t)arg;
    cap_sleep_ns(10000000);
    CHECK_EQ(write(fd, "x", 1), 1);
    return NULL;
}

static void *observer(void *arg)
{
    (void)arg;
    struct pollfd p = { .fd = pv[0][0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK(p.revents & POLLIN);
    atomic_fetch_add(&woken, 1);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < FDS; i++)
        CHECK_EQ(pipe(pv[i]), 0);
    char c;

    target = 13;
    struct pollfd p[FDS];
    for (int i = 0; i < FDS; i++)
        p[i] = (struct pollfd){ .fd = pv[i][0], .events = POLLIN };
    cap_thread_t t = spawn(write_later, (void *)(intptr_t)pv[target][1]);
    CHECK_EQ(poll(p, FDS, -1), 1);
    for (int i = 0; i < FDS; i++)
        CHECK_EQ(p[i].revents, i == target ? POLLIN : 0);
    join(t);
    CHECK_EQ(read(pv[target][0], &c, 1), 1);

    target = 7;
    fd_set r;
    FD_ZERO(&r);
    int maxfd = 0;
    for (int i = 0; i < FDS; i++) {
        FD_SET(pv[i][0], &r);
        if (pv[i][0] > maxfd)
            maxfd = pv[i][0];
    }
    t = spawn(write_later, (void *)(intptr_t)pv[target][1]);
    CHECK_EQ(select(maxfd + 1, &r, NULL, NULL, NULL), 1);
    for (int i = 0; i < FDS; i++)
        CHECK_EQ(FD_ISSET(pv[i][0], &r) != 0, i == target);
    join(t);
    CHECK_EQ(read(pv[target][0], &c, 1), 1);

    target = 3;
    int ep = epoll_create1(0);
    for (int i = 0; i < FDS; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
        CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, pv[i][0], &ev), 0);
    }
    t = spawn(write_later, (void *)(intptr_t)pv[target][1]);
    struct epoll_event out[FDS];
    CHECK_EQ(epoll_wait(ep, out, FDS, -1), 1);
    CHECK_EQ(out[0].data.u32, (uint32_t)target);
    join(t);
    close(ep);

    /* Writability: a pipe with room is ready for POLLOUT at once. */
    struct pollfd w = { .fd = pv[0][1], .events = POLLOUT };
    CHECK_EQ(poll(&w, 1, 0), 1);

    cap_thread_t o[OBSERVERS];
    for (int i = 0; i < OBSERVERS; i++)
        o[i] = spawn(observer, NULL);
    cap_sleep_ns(10000000);
    CHECK_EQ(write(pv[0][1], "x", 1), 1);
    for (int i = 0; i < OBSERVERS; i++)
        join(o[i]);
    CHECK_EQ(atomic_load(&woken), OBSERVERS);
    return 0;
}

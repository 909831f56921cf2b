/* SPDX-License-Identifier: MIT */
/* Description: several threads wait in epoll_wait on one set; a
 * level-triggered event that stays ready (a byte nobody reads) is
 * reported to every one of them in turn, as Linux does (after a report
 * with events left ready it wakes another waiter). The runtime parks the
 * waiters on the set's descriptor, whose readiness the backend reports
 * as an edge: before, the first waiter took the event and the others
 * waited for a new one, for good if none came (under CAP_NETIO=epoll and
 * uring). Both ways the event comes: a descriptor added to the set ready
 * already, and a write to one in the set after the waiters parked. The
 * alarm ends a run that hangs. */
#include <sys/epoll.h>

#include "io/io_util.h"

enum { WAITERS = 4 };

static int ep;
static atomic_int reported;

static void *wait_once(void *arg)
{
    int want = (int)(intptr_t)arg;
    struct epoll_event ev;
    CHECK_EQ(epoll_wait(ep, &ev, 1, -1), 1);
    CHECK_EQ((int)ev.data.u32, want);
    CHECK(ev.events & EPOLLIN);
    atomic_fetch_add(&reported, 1);
    return NULL;
}

static int p[2];

static void add(int tag)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)tag };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
}

/* in_set_first: the pipe is in the set before the waiters park and gets
 * its byte after; else it gets its byte, then joins the set. */
static void round_of(int tag, bool in_set_first)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK_GE(ep, 0);
    if (in_set_first)
        add(tag);
    atomic_store(&reported, 0);
    cap_thread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        t[i] = spawn(wait_once, (void *)(intptr_t)tag);
    cap_sleep_ns(20000000); /* they park (else they find it ready: as good) */
    CHECK_EQ(write(p[1], "x", 1), 1);
    if (!in_set_first)
        add(tag);
    for (int i = 0; i < WAITERS; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&reported), WAITERS);
    CHECK_EQ(close(ep), 0);
    char buf[16];
    CHECK_EQ(read(p[0], buf, sizeof buf), 1);
}

int main(void)
{
    alarm(30);
    CHECK_EQ(pipe(p), 0);
    round_of(1, false);
    round_of(2, true);
    puts("ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: many threads blocked in accept() on one listening socket
 * and a storm of connections: every connection is accepted exactly once,
 * none is left in the backlog (a woken acceptor passes readiness on when
 * more connections wait), and the acceptors share the work. */
#include <stdatomic.h>

#include "io/io_util.h"

enum { ACCEPTORS = 100, CONNS = 2000 };

static int l, port;
static atomic_int accepted;

static void *acceptor(void *arg)
{
    (void)arg;
    long mine = 0;
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0) {
            CHECK_EQ(errno, EBADF); /* main closed the listener: done */
            break;
        }
        uint32_t v;
        CHECK_EQ(read(c, &v, sizeof v), (ssize_t)sizeof v);
        atomic_fetch_add(&accepted, 1);
        CHECK_EQ(write(c, &v, sizeof v), (ssize_t)sizeof v);
        close(c);
        mine++;
    }
    return (void *)mine;
}

static void *connector(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (uint32_t k = 0; k < CONNS / 20; k++) {
        int s = tcp_connect(port);
        CHECK_GE(s, 0);
        uint32_t v = (uint32_t)id << 16 | k, back;
        CHECK_EQ(write(s, &v, sizeof v), (ssize_t)sizeof v);
        CHECK_EQ(read(s, &back, sizeof back), (ssize_t)sizeof back);
        CHECK_EQ(back, v);
        close(s);
    }
    return NULL;
}

int main(void)
{
    raise_nofile(4096);
    l = tcp_listener(SOCK_STREAM, 1024, &port);
    cap_thread_t a[ACCEPTORS], c[20];
    for (int i = 0; i < ACCEPTORS; i++)
        a[i] = spawn(acceptor, NULL);
    for (intptr_t i = 0; i < 20; i++)
        c[i] = spawn(connector, (void *)i);
    for (int i = 0; i < 20; i++)
        join(c[i]);
    CHECK_EQ(atomic_load(&accepted), CONNS);
    close(l);
    long total = 0;
    for (int i = 0; i < ACCEPTORS; i++)
        total += (long)join(a[i]);
    CHECK_EQ(total, CONNS);
    return 0;
}

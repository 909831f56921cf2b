/* SPDX-License-Identifier: MIT */
/* Description: a blocking read of a stream socket with SO_RCVLOWAT 5
 * waits, as Linux's does, until min(5, length) bytes are queued: with 3
 * bytes there and 2 more coming later it returns 5 (it returned 3, the
 * runtime's non-blocking attempt ignoring the mark), while other threads
 * run; a read of 2 takes 2 at once; the end of the stream ends the wait
 * with what is there, then 0; the mark set back to 1 reads what is
 * queued. TCP (readiness only at the mark) and Unix (at every arrival). */
#include <string.h>
#include <sys/socket.h>

#include "io/io_util.h"

static int peer;
static struct ticker tick;

static void *late_part(void *arg)
{
    (void)arg;
    CHECK_EQ(write(peer, "abc", 3), 3);
    usleep(30000);
    CHECK_EQ(write(peer, "de", 2), 2);
    return NULL;
}

static void check(int r, int w)
{
    peer = w;
    int mark = 5;
    CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark), 0);
    char buf[100];
    long before = atomic_load(&tick.ticks);
    cap_thread_t t = spawn(late_part, NULL);
    CHECK_EQ(read(r, buf, sizeof buf), 5);
    CHECK(memcmp(buf, "abcde", 5) == 0);
    CHECK(atomic_load(&tick.ticks) > before);
    join(t);

    CHECK_EQ(write(w, "xyz", 3), 3);
    CHECK_EQ(recv(r, buf, 2, 0), 2); /* the mark is min(5, 2) */
    CHECK(memcmp(buf, "xy", 2) == 0);

    /* 'z' and two more, then the end: what is there, then 0. */
    CHECK_EQ(write(w, "pq", 2), 2);
    CHECK_EQ(shutdown(w, SHUT_WR), 0);
    CHECK_EQ(read(r, buf, sizeof buf), 3);
    CHECK(memcmp(buf, "zpq", 3) == 0);
    CHECK_EQ(read(r, buf, sizeof buf), 0);
}

static void mark_back_to_one(int r, int w)
{
    int mark = 5;
    CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark), 0);
    mark = 1;
    CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark), 0);
    CHECK_EQ(write(w, "k", 1), 1);
    char c;
    CHECK_EQ(read(r, &c, 1), 1);
    CHECK_EQ(c, 'k');
}

int main(void)
{
    cap_thread_t t = spawn(ticker_run, &tick);
    int port, l = tcp_listener(SOCK_STREAM, 4, &port);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    check(s, c);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);

    c = tcp_connect(port);
    CHECK_GE(c, 0);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    mark_back_to_one(s, c);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(l), 0);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    check(sv[0], sv[1]);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);

    atomic_store(&tick.stop, 1);
    join(t);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: close() of a TCP socket whose SO_LINGER has a timeout,
 * with data the peer has not taken, lets the worker's other threads run
 * while it waits (on CAP_WORKERS=1 too: Linux lingers in close whatever
 * O_NONBLOCK says, and a yielding ticker did not move during the old
 * library's 1 s close). It returns 0; what was left is delivered after
 * it, then EOF, as after the kernel's own timeout. A close whose data a
 * reader takes meanwhile returns with every byte delivered; a zero
 * timeout still resets the connection. */
#include "io/io_util.h"

static void set_linger(int c, int seconds)
{
    struct linger lg = { .l_onoff = 1, .l_linger = seconds };
    CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
}

static void *reader(void *arg)
{
    return (void *)(uintptr_t)read_to_eof((int)(intptr_t)arg);
}

int main(void)
{
    struct ticker t = { 0 };
    cap_thread_t tt = spawn(ticker_run, &t);
    while (atomic_load(&t.ticks) == 0)
        cap_yield();
    int port;
    int l = tcp_listener(SOCK_STREAM, 4, &port);

    /* Nobody reads during the 1 s timeout. */
    int c = tcp_connect(port);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    size_t sent = fill_socket(c);
    set_linger(c, 1);
    long before = atomic_load(&t.ticks);
    CHECK_EQ(close(c), 0);
    CHECK_GT(atomic_load(&t.ticks), before);
    CHECK_EQ(read_to_eof(s), sent);
    CHECK_EQ(close(s), 0);

    /* A reader takes it all during the wait. */
    c = tcp_connect(port);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    sent = fill_socket(c);
    set_linger(c, 30);
    cap_thread_t r = spawn(reader, (void *)(intptr_t)s);
    CHECK_EQ(close(c), 0);
    CHECK_EQ((size_t)(uintptr_t)join(r), sent);
    CHECK_EQ(close(s), 0);

    /* A zero timeout resets. */
    c = tcp_connect(port);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    CHECK_EQ(write(c, "x", 1), 1);
    set_linger(c, 0);
    CHECK_EQ(close(c), 0);
    char b[8];
    ssize_t n = read(s, b, sizeof b);
    CHECK(n == 1 || (n < 0 && errno == ECONNRESET));
    if (n == 1)
        CHECK(read(s, b, sizeof b) < 0 && errno == ECONNRESET);
    CHECK_EQ(close(s), 0);

    atomic_store(&t.stop, 1);
    join(tt);
    close(l);
    return 0;
}

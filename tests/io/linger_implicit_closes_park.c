/* SPDX-License-Identifier: MIT */
/* Description: the closes other calls make of a TCP socket that lingers
 * (SO_LINGER with a timeout, data the peer has not taken) let the
 * worker's other threads run while they wait, as close() does
 * (intercept/linger.c): dup2 and dup3 onto it, close_range over it, and
 * fclose and freopen of a stream over it; each for a socket whose lingering the
 * wrapper saw set on its only number (the wait is made parked), and for
 * one it cannot wait for itself (duplicated before, or made and set
 * past the runtime: glibc's or the kernel's close is made on the pool).
 * Linux waits in that close whatever O_NONBLOCK says, and each of these
 * waited on the worker (a yielding ticker did not move during the
 * library's wait before, on one worker). The peer starts reading once
 * the ticker has had a turn (on the old library, once the whole 1 s
 * timeout had passed). Each call returns as the kernel's does, the dup's number
 * then names the other file, and every byte sent reaches the peer, then
 * EOF. */
#include <stdio.h>

#include "io/io_util.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static struct ticker ticker;
static int port, listener;

static void set_linger(int c, bool raw)
{
    struct linger lg = { .l_onoff = 1, .l_linger = 1 };
    if (raw)
        CHECK_EQ(syscall(SYS_setsockopt, c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    else
        CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
}

/* A connected socket that lingers, its data left unread in the peer s
 * (*sent bytes): the wrapper saw its lingering set on its only number
 * (kind 0), it was duplicated first (1), or made and set past the
 * runtime (2). */
static int lingering(int kind, int *s, size_t *sent)
{
    int c = kind == 2 ? raw_tcp_connect(port, NULL) : tcp_connect(port);
    CHECK_GE(c, 0);
    *s = accept(listener, NULL, NULL);
    CHECK_GE(*s, 0);
    if (kind == 1) {
        int d = dup(c);
        CHECK_GE(d, 0);
        CHECK_EQ(close(d), 0);
    }
    *sent = fill_socket(c);
    set_linger(c, kind == 2);
    return c;
}

/* The ticks before the call under test: its peer's reader starts once the
 * ticker has moved past them, so the call cannot end before the ticker
 * had a turn (on one worker, only if the call let the worker go), and
 * nothing rests on how long a turn takes to come on a loaded machine. */
static atomic_long drain_after;

/* The peer s, read to its end by a thread of its own once the ticker has
 * moved: the call under test waits until then at least, and then not
 * for the whole timeout. */
static void *drain_main(void *arg)
{
    int s = (int)(intptr_t)arg;
    while (atomic_load(&ticker.ticks) <= atomic_load(&drain_after))
        cap_sleep_ns(1000 * 1000);
    return (void *)(uintptr_t)read_to_eof(s);
}

/* Starts the reader of s for a call to be made next; the ticks before it
 * in *before. */
static cap_thread_t drain(int s, long *before)
{
    *before = atomic_load(&ticker.ticks);
    atomic_store(&drain_after, *before);
    return spawn(drain_main, (void *)(intptr_t)s);
}

/* What the peer s that d drained read: every byte sent, then EOF. */
static void delivered(cap_thread_t d, int s, size_t sent)
{
    void *got;
    CHECK_EQ(cap_thread_join(d, &got), 0);
    CHECK_EQ((size_t)(uintptr_t)got, sent);
    CHECK_EQ(close(s), 0);
}

/* The ticker moved since before: the caller's wait let it run. */
static void ran_meanwhile(long before)
{
    CHECK_GT(atomic_load(&ticker.ticks), before);
}

static void dup_onto(int kind, bool three)
{
    int s;
    size_t sent;
    int c = lingering(kind, &s, &sent);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    long before;
    cap_thread_t d = drain(s, &before);
    if (three)
        CHECK_EQ(dup3(p[0], c, O_CLOEXEC), c);
    else
        CHECK_EQ(dup2(p[0], c), c);
    ran_meanwhile(before);
    delivered(d, s, sent);
    /* c is the pipe's read end now. */
    CHECK_EQ(write(p[1], "k", 1), 1);
    char k;
    CHECK_EQ(read(c, &k, 1), 1);
    CHECK_EQ(k, 'k');
    CHECK_EQ(fcntl(c, F_GETFD) & FD_CLOEXEC, three ? FD_CLOEXEC : 0);
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

/* s at a number above the range the test closes: the peers stay open. */
static int above(int s)
{
    int high = fcntl(s, F_DUPFD, 600);
    CHECK_GE(high, 600);
    CHECK_EQ(close(s), 0);
    return high;
}

static void range_over(void)
{
    /* Both kinds at once, and a plain socket between: all closed. */
    int s[3];
    size_t sent[3];
    int c[3];
    c[0] = lingering(0, &s[0], &sent[0]);
    c[1] = tcp_connect(port);
    CHECK_GE(c[1], 0);
    s[1] = accept(listener, NULL, NULL);
    CHECK_GE(s[1], 0);
    sent[1] = 0;
    c[2] = lingering(1, &s[2], &sent[2]);
    for (int i = 0; i < 3; i++)
        s[i] = above(s[i]);
    int lo = c[0], hi = c[0];
    for (int i = 1; i < 3; i++) {
        lo = c[i] < lo ? c[i] : lo;
        hi = c[i] > hi ? c[i] : hi;
    }
    /* CLOSE_RANGE_CLOEXEC closes nothing and waits for nothing. */
    CHECK_EQ(close_range((unsigned)lo, (unsigned)hi, CLOSE_RANGE_CLOEXEC), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(fcntl(c[i], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    cap_thread_t d[3];
    long before;
    for (int i = 0; i < 3; i++)
        d[i] = drain(s[i], &before); /* the same ticks for the three */
    CHECK_EQ(close_range((unsigned)lo, (unsigned)hi, 0), 0);
    ran_meanwhile(before);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(fcntl(c[i], F_GETFD), -1);
        CHECK_EQ(errno, EBADF);
        delivered(d[i], s[i], sent[i]);
    }
}

/* fclose of a stream over the socket, or freopen of it onto a path,
 * which closes the stream's old descriptor first. */
static void stream_close_of(int kind, bool reopen)
{
    int s;
    size_t sent;
    int c = lingering(kind, &s, &sent);
    FILE *f = fdopen(c, "w");
    CHECK(f != NULL);
    /* Nothing buffered: the socket is full, a flush would wait for the
     * peer, which reads only after the close. */
    long before;
    cap_thread_t d = drain(s, &before);
    if (reopen)
        CHECK(freopen("/dev/null", "w", f) == f);
    else
        CHECK_EQ(fclose(f), 0);
    ran_meanwhile(before);
    if (!reopen)
        CHECK_EQ(fcntl(c, F_GETFD), -1);
    delivered(d, s, sent);
    if (reopen) {
        CHECK(fputs("gone", f) >= 0);
        CHECK_EQ(fclose(f), 0);
    }
}

int main(void)
{
    cap_thread_t tt = spawn(ticker_run, &ticker);
    while (atomic_load(&ticker.ticks) == 0)
        cap_yield();
    listener = tcp_listener(SOCK_STREAM, 8, &port);

    for (int kind = 0; kind < 3; kind++) {
        dup_onto(kind, false);
        dup_onto(kind, true);
        stream_close_of(kind, false);
        stream_close_of(kind, true);
    }
    range_over();

    atomic_store(&ticker.stop, 1);
    join(tt);
    CHECK_EQ(close(listener), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a thread that starts waiting on a descriptor while
 * another thread's close of it is under way (the number ended for the
 * runtime, the file not yet closed in the kernel) is woken by the close
 * (POLLNVAL, as the kernel's poll reports a closed number) and leaves
 * nothing registered that keeps the file open. The first wait on a
 * descriptor arms it in the backend; an arm made in that window outlived
 * the close, and under CAP_NETIO=uring its poll kept the socket open for
 * good, so the peer never saw EOF (a delay injected into close(): 4-12 of
 * 20 rounds). The window is made wide here with no delay: the close of a
 * socket that lingers (SO_LINGER, unsent data) and is not its file's only
 * number is made on the offload pool (intercept/linger.c), and with one
 * pool thread (CAP_POOL_THREADS=1, tests.cmake) busy in another such
 * close, it waits in the pool's queue with the number still open. The
 * main thread polls that socket meanwhile; then both peers read every
 * byte and must see EOF (on the library before, under uring, the second
 * peer's read waited for good: the test's timeout). */
#include "io/io_util.h"

static atomic_int closing;

/* A connected socket that lingers on close (5 s) with its send queue
 * full, its peer in *s and the bytes sent in *sent; duplicated once, so
 * its close is made on the pool. */
static int lingering(int l, int port, int *s, size_t *sent)
{
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    *s = accept(l, NULL, NULL);
    CHECK_GE(*s, 0);
    int d = dup(c);
    CHECK_GE(d, 0);
    CHECK_EQ(close(d), 0);
    *sent = fill_socket(c);
    struct linger lg = { .l_onoff = 1, .l_linger = 5 };
    CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    return c;
}

static void *closer(void *arg)
{
    atomic_fetch_add(&closing, 1);
    CHECK_EQ(close((int)(intptr_t)arg), 0);
    return NULL;
}

static void *drainer(void *arg)
{
    int s = (int)(intptr_t)arg;
    cap_sleep_ns(50 * 1000 * 1000); /* once the poll below waits */
    return (void *)(uintptr_t)read_to_eof(s);
}

static void drained(cap_thread_t d, int s, size_t sent)
{
    void *got;
    CHECK_EQ(cap_thread_join(d, &got), 0);
    CHECK_EQ((size_t)(uintptr_t)got, sent); /* then EOF: its file was closed */
    CHECK_EQ(close(s), 0);
}

int main(void)
{
    int port;
    int l = tcp_listener(SOCK_STREAM, 4, &port);
    int sa, sb;
    size_t sent_a, sent_b;
    int a = lingering(l, port, &sa, &sent_a);
    int b = lingering(l, port, &sb, &sent_b);

    /* a's close takes the one pool thread until sa is drained. */
    cap_thread_t ca = spawn(closer, (void *)(intptr_t)a);
    while (atomic_load(&closing) < 1)
        cap_yield();
    cap_sleep_ns(10 * 1000 * 1000);
    /* b's close: its number ended for the runtime, its job queued. */
    cap_thread_t cb = spawn(closer, (void *)(intptr_t)b);
    while (atomic_load(&closing) < 2)
        cap_yield();
    cap_sleep_ns(10 * 1000 * 1000);

    cap_thread_t da = spawn(drainer, (void *)(intptr_t)sa);
    cap_thread_t db = spawn(drainer, (void *)(intptr_t)sb);
    /* The first wait on b: a full send queue is not writable and nothing
     * is readable, so it waits, until b's close ends (POLLNVAL) or, as a
     * poll that began before a close may under Linux, until the drained
     * queue makes b writable. */
    struct pollfd pf = { .fd = b, .events = POLLIN | POLLOUT };
    CHECK_EQ(poll(&pf, 1, -1), 1);
    CHECK(pf.revents == POLLNVAL || pf.revents == POLLOUT);
    join(ca);
    join(cb);
    drained(da, sa, sent_a);
    drained(db, sb, sent_b);
    CHECK_EQ(close(l), 0);
    return 0;
}

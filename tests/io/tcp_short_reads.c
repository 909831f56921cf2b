/* SPDX-License-Identifier: MIT */
/* Description: blocking reads on TCP after a short read, the case where
 * the runtime parks without trying the call (io/fd.h, drained sockets),
 * lose nothing: data sent right after a short read wakes the reader (a
 * plain pthread client races the reader 20,000 times, and 2,000 times on
 * a fresh connection, whose short first read comes before the runtime
 * has registered the socket: the park registers it, and the registration
 * must report what came meanwhile); a FIN, an urgent
 * mark or a reset that stops a read short, with its event harvested
 * before the read, does not leave the next read parked; a short MSG_PEEK
 * is no drain; a dup of the socket reads what arrives; a non-blocking
 * read, and one whose SO_RCVTIMEO ran out before the event was harvested,
 * still get data that is there. A lost wake-up hangs the test (timeout). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 20000, FRESH_ROUNDS = 2000, SETTLE_NS = 20000000 };

static int port;

/* Reads exactly n bytes (a loop of blocking reads with a larger buffer). */
static void read_exactly(int fd, const char *want, size_t n)
{
    char buf[64];
    read_exactly_n(fd, buf, sizeof buf, n);
    CHECK(memcmp(buf, want, n) == 0);
}

/* Waits in the kernel, bypassing the runtime, until fd polls readable. */
static void kernel_sees_data(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    while (syscall(SYS_poll, &p, 1, 0) == 0)
        ;
}

/* ---- the race: two sends right after the reader's short read ----------- */

static void *racing_client(void *arg)
{
    (void)arg;
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    unsigned spin = 1;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(write(s, "q", 1), 1);
        char c;
        CHECK_EQ(read(s, &c, 1), 1); /* the reader has read "q" (short) */
        CHECK_EQ(write(s, "r", 1), 1);
        spin = spin * 1103515245u + 12345u;
        for (volatile unsigned k = 0; k < (spin >> 16) % 2000; k++)
            ;
        CHECK_EQ(write(s, "s", 1), 1);
        CHECK_EQ(read(s, &c, 1), 1);
    }
    close(s);
    return NULL;
}

static void race(int l)
{
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, racing_client, NULL), 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    for (int i = 0; i < ROUNDS; i++) {
        read_exactly(c, "q", 1);
        CHECK_EQ(write(c, "a", 1), 1);
        read_exactly(c, "rs", 2);
        CHECK_EQ(write(c, "b", 1), 1);
    }
    char x;
    CHECK_EQ(read(c, &x, 1), 0);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    close(c);
}

/* ---- the same race on a socket not yet registered ----------------------- */

static void *fresh_client(void *arg)
{
    (void)arg;
    unsigned spin = 7;
    for (int i = 0; i < FRESH_ROUNDS; i++) {
        int s = tcp_connect(port);
        CHECK_GE(s, 0);
        int one = 1;
        CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
        CHECK_EQ(write(s, "q", 1), 1);
        char c;
        CHECK_EQ(read(s, &c, 1), 1); /* the reader has read "q" (short) */
        spin = spin * 1103515245u + 12345u;
        for (volatile unsigned k = 0; k < (spin >> 16) % 2000; k++)
            ;
        CHECK_EQ(write(s, "r", 1), 1);
        CHECK_EQ(read(s, &c, 1), 0); /* the reader closed */
        close(s);
    }
    return NULL;
}

static void race_fresh(int l)
{
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, fresh_client, NULL), 0);
    for (int i = 0; i < FRESH_ROUNDS; i++) {
        int c = accept(l, NULL, NULL);
        CHECK_GE(c, 0);
        kernel_sees_data(c); /* the first read is short, not EAGAIN: no park, no registration */
        read_exactly(c, "q", 1);
        CHECK_EQ(write(c, "a", 1), 1);
        read_exactly(c, "r", 1); /* parks at once, registering the socket */
        close(c);
    }
    CHECK_EQ(pthread_join(kt, NULL), 0);
}

/* ---- what stops a read short: FIN, urgent mark, reset ---------------------- */

enum ending { FIN, URGENT, RESET, PEEK, DUP, NONBLOCK, TIMEOUT };

static enum ending ending;
static atomic_int sent;

static void *ending_client(void *arg)
{
    (void)arg;
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    CHECK_EQ(write(s, "a", 1), 1);
    char c;
    CHECK_EQ(read(s, &c, 1), 1); /* the reader read "a" (short) and parks no more */
    switch (ending) {
    case FIN:
        CHECK_EQ(write(s, "bc", 2), 2);
        CHECK_EQ(shutdown(s, SHUT_WR), 0);
        break;
    case URGENT:
        CHECK_EQ(write(s, "b", 1), 1);
        CHECK_EQ(send(s, "X", 1, MSG_OOB), 1);
        CHECK_EQ(write(s, "c", 1), 1);
        break;
    case RESET: {
        CHECK_EQ(write(s, "bc", 2), 2);
        struct linger lg = { 1, 0 };
        CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
        close(s); /* sends the reset */
        atomic_store(&sent, 1);
        return NULL;
    }
    default:
        CHECK_EQ(write(s, "bc", 2), 2);
        break;
    }
    atomic_store(&sent, 1);
    CHECK_EQ(read(s, &c, 1), 0); /* the reader is done */
    close(s);
    return NULL;
}

static void ends(int l, enum ending e)
{
    ending = e;
    atomic_store(&sent, 0);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, ending_client, NULL), 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    char buf[64];
    CHECK_EQ(read(c, buf, sizeof buf), 1); /* parks first (registers), then "a" */
    CHECK_EQ(buf[0], 'a');
    CHECK_EQ(write(c, "k", 1), 1);
    if (e == NONBLOCK || e == TIMEOUT) {
        /* The data is there, but this worker has not harvested its event:
         * it has run nothing else since. */
        while (!atomic_load(&sent))
            ;
        kernel_sees_data(c);
    } else {
        cap_sleep_ns(SETTLE_NS); /* every event harvested before the next read */
    }
    switch (e) {
    case FIN:
        read_exactly(c, "bc", 2);
        CHECK_EQ(read(c, buf, sizeof buf), 0);
        break;
    case URGENT:
        read_exactly(c, "b", 1); /* stops at the mark */
        read_exactly(c, "c", 1); /* the urgent byte is out of band */
        break;
    case RESET: {
        ssize_t r;
        while ((r = read(c, buf, sizeof buf)) > 0)
            ;
        CHECK(r == 0 || (r == -1 && errno == ECONNRESET));
        break;
    }
    case PEEK:
        CHECK_EQ(recv(c, buf, sizeof buf, MSG_PEEK), 2);
        read_exactly(c, "bc", 2); /* a peek leaves the data */
        break;
    case DUP: {
        int d = dup(c);
        CHECK_GE(d, 0);
        read_exactly(d, "bc", 2);
        close(d);
        break;
    }
    case NONBLOCK:
        CHECK_EQ(fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK), 0);
        CHECK_EQ(read(c, buf, sizeof buf), 2);
        CHECK_EQ(read(c, buf, sizeof buf), -1);
        CHECK_EQ(errno, EAGAIN);
        break;
    case TIMEOUT: {
        struct timeval tv = { 0, 1 };
        CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
        CHECK_EQ(read(c, buf, sizeof buf), 2);
        CHECK_EQ(read(c, buf, sizeof buf), -1);
        CHECK_EQ(errno, EAGAIN);
        break;
    }
    }
    if (e != RESET)
        shutdown(c, SHUT_WR);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    close(c);
}

int main(void)
{
    int l = tcp_listener(SOCK_STREAM, 8, &port);
    race(l);
    race_fresh(l);
    for (enum ending e = FIN; e <= TIMEOUT; e++)
        ends(l, e);
    close(l);
    return 0;
}

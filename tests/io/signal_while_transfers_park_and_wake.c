/* SPDX-License-Identifier: MIT */
/* Description: signals keep interrupting reads and writes while other
 * transfers park and wake around them, on TCP sockets and then on private
 * pipes. Blocking transfers are interruptible only while parked
 * (src/io/sigintr.h, "Parked-only calls"); private pipes (io/pipe.h) are
 * never armed and are woken lock-free by the transfer on the other end,
 * which an interrupt races. Each phase runs a stream of SIGUSR1 (handler
 * without SA_RESTART) through echo pairs that bounce a numbered byte
 * stream (their calls park and are woken all the time; half the sockets
 * with SO_RCVTIMEO), idle readers parked in read (or recv, on sockets)
 * and idle threads in poll (a registered call; on a pipe it makes the
 * pipe fall back). It checks that
 *  - every delivery interrupts at most one call: the EINTRs seen never
 *    outnumber the handler's runs;
 *  - an interrupted transfer moved nothing: the echoed stream arrives
 *    whole and in order;
 *  - the parked calls keep being interrupted: the sender stops only once
 *    the idle readers and pollers have each seen EINTR a number of times
 *    (a lost interrupt or wake-up hangs the test, which then times out). */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/time.h>

#include "io/io_util.h"

enum { NECHO = 4, NIDLE = 4, NPOLL = 2, ROUNDS = 1000, WANT = 20, WANT_ECHO = 200 };

static atomic_long handled;
static atomic_long eintrs, echo_eintrs;
static atomic_int stop_echo;
static atomic_long idle_hits[NIDLE + NPOLL];

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

/* Reads exactly n bytes, counting EINTRs (an interrupted read took nothing). */
static void read_all(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            atomic_fetch_add(&echo_eintrs, 1);
            continue;
        }
        CHECK_GT(r, 0);
        got += (size_t)r;
    }
}

static void write_all(int fd, const unsigned char *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t r = write(fd, buf + put, n - put);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            atomic_fetch_add(&echo_eintrs, 1);
            continue;
        }
        CHECK_GT(r, 0);
        put += (size_t)r;
    }
}

struct pair {
    int client, server;     /* the descriptors each side reads */
    int client_w, server_w; /* and writes: the same on a socket */
};
static struct pair pairs[NECHO];

static void *echo_server(void *arg)
{
    int fd = pairs[(long)arg].server, wfd = pairs[(long)arg].server_w;
    unsigned char buf[64];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            atomic_fetch_add(&echo_eintrs, 1);
            continue;
        }
        CHECK_GE(r, 0);
        if (r == 0) { /* the client is done: so are we */
            CHECK_EQ(close(wfd), 0);
            return NULL;
        }
        write_all(wfd, buf, (size_t)r);
    }
}

static void *echo_client(void *arg)
{
    int fd = pairs[(long)arg].client, wfd = pairs[(long)arg].client_w;
    unsigned next = 0, expect = 0;
    while (!atomic_load(&stop_echo)) {
        unsigned char out[16], in[16];
        size_t n = 1 + next % sizeof out;
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)(next++);
        write_all(wfd, out, n);
        read_all(fd, in, n);
        for (size_t i = 0; i < n; i++)
            CHECK_EQ(in[i], (unsigned char)(expect++));
    }
    if (wfd == fd)
        CHECK_EQ(shutdown(fd, SHUT_WR), 0);
    else
        CHECK_EQ(close(wfd), 0);
    unsigned char c;
    ssize_t r; /* the server's close */
    while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
        atomic_fetch_add(&eintrs, 1);
    CHECK_EQ(r, 0);
    CHECK_EQ(close(fd), 0);
    return NULL;
}

static int idle_fds[NIDLE + NPOLL][2]; /* [0] read by the thread, [1] the peer */
static bool on_sockets;

/* Parks in read (recv for odd i on sockets) until a byte comes, counting
 * EINTRs. */
static void *idle_reader(void *arg)
{
    long i = (long)arg;
    for (;;) {
        char c;
        ssize_t r = on_sockets && i % 2 ? recv(idle_fds[i][0], &c, 1, 0)
                                        : read(idle_fds[i][0], &c, 1);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            atomic_fetch_add(&idle_hits[i], 1);
            continue;
        }
        CHECK_EQ(r, 1);
        CHECK_EQ(c, 'q');
        return NULL;
    }
}

static void *idle_poller(void *arg)
{
    long i = (long)arg;
    for (;;) {
        struct pollfd p = { .fd = idle_fds[i][0], .events = POLLIN };
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            atomic_fetch_add(&idle_hits[i], 1);
            continue;
        }
        CHECK_EQ(r, 1);
        return NULL;
    }
}

static void tcp_pair(int l, int port, int *a, int *b)
{
    *a = tcp_connect(port);
    CHECK_GE(*a, 0);
    *b = accept(l, NULL, NULL);
    CHECK_GE(*b, 0);
    int one = 1;
    CHECK_EQ(setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    CHECK_EQ(setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
}

static bool idle_done(void)
{
    for (int i = 0; i < NIDLE + NPOLL; i++)
        if (atomic_load(&idle_hits[i]) < WANT)
            return false;
    return true;
}

static void make_sockets(void)
{
    int port, l = tcp_listener(SOCK_STREAM, 64, &port);
    struct timeval tv = { .tv_sec = 100 }; /* never expires: makes reads "always" */
    for (int i = 0; i < NECHO; i++) {
        tcp_pair(l, port, &pairs[i].client, &pairs[i].server);
        pairs[i].client_w = pairs[i].client;
        pairs[i].server_w = pairs[i].server;
        if (i % 2) {
            CHECK_EQ(setsockopt(pairs[i].client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
            CHECK_EQ(setsockopt(pairs[i].server, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
        }
    }
    for (int i = 0; i < NIDLE + NPOLL; i++)
        tcp_pair(l, port, &idle_fds[i][0], &idle_fds[i][1]);
    CHECK_EQ(setsockopt(idle_fds[0][0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    CHECK_EQ(close(l), 0);
}

static void make_pipes(void)
{
    for (int i = 0; i < NECHO; i++) {
        int a[2], b[2];
        CHECK_EQ(pipe(a), 0);
        CHECK_EQ(pipe(b), 0);
        pairs[i] = (struct pair){ .client = a[0], .server_w = a[1], .server = b[0],
                                  .client_w = b[1] };
    }
    for (int i = 0; i < NIDLE + NPOLL; i++)
        CHECK_EQ(pipe(idle_fds[i]), 0);
}

static void phase(bool sockets)
{
    on_sockets = sockets;
    atomic_store(&stop_echo, 0);
    for (int i = 0; i < NIDLE + NPOLL; i++)
        atomic_store(&idle_hits[i], 0);
    (sockets ? make_sockets : make_pipes)();

    cap_thread_t srv[NECHO], cli[NECHO], idle[NIDLE + NPOLL];
    for (long i = 0; i < NECHO; i++) {
        srv[i] = spawn(echo_server, (void *)i);
        cli[i] = spawn(echo_client, (void *)i);
    }
    for (long i = 0; i < NIDLE; i++)
        idle[i] = spawn(idle_reader, (void *)i);
    for (long i = NIDLE; i < NIDLE + NPOLL; i++)
        idle[i] = spawn(idle_poller, (void *)i);

    /* With the idle calls, the longest waiters, parked: at least ROUNDS
     * signals, then on until every idle call has been interrupted WANT
     * times. */
    for (long n = 0; n < ROUNDS || !idle_done(); n++) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(50000); /* not an intercepted call: never interrupted */
        CHECK(atomic_load(&eintrs) <= atomic_load(&handled));
    }
    for (int i = 0; i < NIDLE + NPOLL; i++) {
        CHECK_EQ(write(idle_fds[i][1], "q", 1), 1);
        join(idle[i]);
        CHECK_EQ(close(idle_fds[i][0]), 0);
        CHECK_EQ(close(idle_fds[i][1]), 0);
    }
    /* Then only the echoing calls, which park and wake all the time:
     * ROUNDS more, and on until they have seen WANT_ECHO EINTRs. */
    long base = atomic_load(&echo_eintrs);
    for (long n = 0; n < ROUNDS || atomic_load(&echo_eintrs) - base < WANT_ECHO; n++) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(50000);
        CHECK(atomic_load(&eintrs) <= atomic_load(&handled));
    }

    atomic_store(&stop_echo, 1);
    for (int i = 0; i < NECHO; i++) {
        join(cli[i]);
        join(srv[i]);
    }
    if (!sockets) /* the pipes' other ends (a socket's is the same descriptor) */
        for (int i = 0; i < NECHO; i++)
            CHECK_EQ(close(pairs[i].server), 0);
    CHECK(atomic_load(&eintrs) <= atomic_load(&handled));
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    phase(true);
    phase(false);
    return 0;
}

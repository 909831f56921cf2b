/* SPDX-License-Identifier: MIT */
/* Description: signals keep interrupting reads and writes of private
 * pipes (io/pipe.h: never armed, woken lock-free by the transfer on the
 * other end) while they park and wake. The pipe twin of
 * signal_while_sockets_park_and_wake: echo pairs bounce a numbered byte
 * stream through two private pipes each (reads park on an empty pipe,
 * the interrupt races the other end's lock-free wake-up), idle readers
 * park in read on private pipes, idle pollers poll a pipe (which makes
 * it fall back). A stream of SIGUSR1 (handler without SA_RESTART) runs
 * through them. It checks that every delivery interrupts at most one
 * call (EINTRs never outnumber handler runs), that an interrupted
 * transfer moved nothing (the echoed stream arrives whole and in order),
 * and that the parked calls keep being interrupted (a lost interrupt or
 * wake-up hangs the test, which then times out). */
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
    int client, server;      /* the descriptors each side reads */
    int client_w, server_w;  /* and writes */
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
        if (r == 0) {
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
    CHECK_EQ(close(wfd), 0);
    unsigned char c;
    ssize_t r; /* the server's close */
    while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
        atomic_fetch_add(&eintrs, 1);
    CHECK_EQ(r, 0);
    return NULL;
}

static int idle_fds[NIDLE + NPOLL][2]; /* [0] read by the thread, [1] the peer */

/* Parks in read until a byte comes, counting EINTRs. */
static void *idle_reader(void *arg)
{
    long i = (long)arg;
    for (;;) {
        char c;
        ssize_t r = read(idle_fds[i][0], &c, 1);
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

static bool idle_done(void)
{
    for (int i = 0; i < NIDLE + NPOLL; i++)
        if (atomic_load(&idle_hits[i]) < WANT)
            return false;
    return true;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    for (int i = 0; i < NECHO; i++) {
        int a[2], b[2];
        CHECK_EQ(pipe(a), 0);
        CHECK_EQ(pipe(b), 0);
        pairs[i] = (struct pair){ .client = a[0], .server_w = a[1], .server = b[0],
                                  .client_w = b[1] };
    }
    for (int i = 0; i < NIDLE + NPOLL; i++)
        CHECK_EQ(pipe(idle_fds[i]), 0);

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
    CHECK(atomic_load(&eintrs) <= atomic_load(&handled));
    return 0;
}

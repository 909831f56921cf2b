/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that calls the async-signal-safe
 * descriptor calls (dup2 onto, dup, close, socket, shutdown) on
 * descriptors user threads are parking on and waking from never
 * deadlocks: the handler may interrupt a worker that holds the very
 * record's lock, so the table's bookkeeping is left to the dispatch after
 * the handler while the system calls are made at once. A 100 us timer
 * signal hits a reader and a writer streaming bytes over a socket pair;
 * its handler dup2()s the reader's socket onto the reader's descriptor,
 * shuts its write side, and dups, creates and closes others. The test
 * checks every byte arrives in order and that the handler's own calls
 * worked; a 30 s watchdog timer (SIGUSR2, default action) ends a
 * deadlocked run. Before, inside the handler these calls took the
 * records' spinlocks, and the run hung within a few thousand signals. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "io/io_util.h"

enum { SIGNALS = 3000, BYTES = 200000 };

static int S, T, R; /* a socket pair S-T; R, a dup of S, is what the reader reads */
static volatile sig_atomic_t handled, handler_failures;
static atomic_int stop;

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    handled++;
    /* R names the same socket afterwards: the reader reads on, though a
     * read parked on R's old life ends with EBADF. */
    if (dup2(S, R) != R)
        handler_failures++;
    if (shutdown(R, SHUT_WR) != 0) /* the reader never writes */
        handler_failures++;
    int d = dup(S);
    if (d < 0 || close(d) != 0)
        handler_failures++;
    int k = socket(AF_INET, SOCK_STREAM, 0);
    if (k < 0 || close(k) != 0)
        handler_failures++;
    errno = saved;
}

static void *writer(void *arg)
{
    (void)arg;
    unsigned char b = 0;
    for (long i = 0; !atomic_load(&stop) || i < BYTES; i++, b++) {
        ssize_t r;
        while ((r = write(T, &b, 1)) < 0 && errno == EINTR)
            ;
        CHECK_EQ(r, 1);
        if (i % 64 == 0)
            cap_yield();
    }
    CHECK_EQ(shutdown(T, SHUT_WR), 0); /* the reader's end of stream */
    return NULL;
}

static timer_t every(int sig, long ns, long first_s)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = sig;
    timer_t t;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    struct itimerspec it = { { 0, ns }, { first_s, first_s ? 0 : ns } };
    CHECK_EQ(timer_settime(t, 0, &it, NULL), 0);
    return t;
}

int main(void)
{
    every(SIGUSR2, 0, 30); /* the watchdog: default action, the process ends */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    S = sv[0];
    T = sv[1];
    R = dup(S);
    CHECK(R >= 0);
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    timer_t tick = every(SIGUSR1, 100000, 0);

    cap_thread_t w = spawn(writer, NULL);
    unsigned char want = 0, buf[64];
    long total = 0;
    for (;;) {
        if (handled >= SIGNALS && total >= BYTES)
            atomic_store(&stop, 1);
        ssize_t r = read(R, buf, sizeof buf);
        if (r == 0)
            break; /* the writer stopped */
        if (r < 0) {
            CHECK(errno == EBADF || errno == EINTR); /* a life of R ended under us */
            continue;
        }
        for (ssize_t i = 0; i < r; i++, want++)
            CHECK_EQ(buf[i], want);
        total += r;
    }
    join(w);
    CHECK_EQ(timer_delete(tick), 0);
    CHECK(total >= BYTES);
    CHECK(handled >= SIGNALS);
    CHECK_EQ(handler_failures, 0);
    return 0;
}

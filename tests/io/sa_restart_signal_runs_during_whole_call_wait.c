/* SPDX-License-Identifier: MIT */
/* Description: a signal sent to a thread that waits in a call registered
 * for its whole length (a read of a signalfd, a blocking connect) runs
 * its SA_RESTART handler while the call waits, and the call then goes on
 * waiting (Linux runs the handler and restarts the call). The sender's
 * interrupt woke such a call to go on, and it parked again without
 * delivering: the handler ran only once the call ended (a SIGUSR2 sent to
 * a thread in a signalfd read: 50 of 50 rounds, on 1 and 2 workers). Each
 * round waits for the handler with no time limit, so the library before
 * hangs here (the test's timeout); half the rounds first send a signal
 * the thread blocks, which wakes nothing. The signalfd read then returns
 * the signal it waits for, and the connect completes once the listener
 * has room. */
#include <signal.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 20, FILL = 3 };

static int sfd;
static atomic_int reading, handled;

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *sfd_reader(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGHUP);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&reading, i + 1);
        struct signalfd_siginfo si;
        CHECK_EQ(read(sfd, &si, sizeof si), (ssize_t)sizeof si);
        CHECK_EQ(si.ssi_signo, (uint32_t)SIGUSR1);
    }
    return NULL;
}

/* Until the handler has run count times. */
static void await_handled(int count)
{
    while (atomic_load(&handled) < count)
        cap_sleep_ns(1000 * 1000);
    CHECK_EQ(atomic_load(&handled), count);
}

static void signalfd_reads(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sfd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(sfd, 0);
    cap_thread_t r = spawn(sfd_reader, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load(&reading) != i + 1)
            cap_sleep_ns(1000 * 1000);
        cap_sleep_ns(2 * 1000 * 1000); /* in the read, most often */
        int before = atomic_load(&handled);
        if (i % 2 == 0)
            CHECK_EQ(cap_thread_kill(r, SIGHUP), 0); /* blocked: held, wakes nothing */
        CHECK_EQ(cap_thread_kill(r, SIGUSR2), 0);
        await_handled(before + 1);
        CHECK_EQ(atomic_load(&reading), i + 1); /* the read goes on */
        CHECK_EQ(cap_thread_kill(r, SIGUSR1), 0); /* what it reads */
    }
    join(r);
    CHECK_EQ(close(sfd), 0);
}

/* ---- a blocking connect to a listener with no room ----------------- */

static int port;
static atomic_int connecting, connected;

static void *connector(void *arg)
{
    (void)arg;
    int c = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(c, 0);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    atomic_store(&connecting, 1);
    CHECK_EQ(connect(c, (struct sockaddr *)&to, sizeof to), 0);
    atomic_store(&connected, 1);
    CHECK_EQ(close(c), 0);
    return NULL;
}

static void blocking_connect(void)
{
    int l = tcp_listener(SOCK_STREAM, 0, &port);
    /* Fill the accept queue (backlog 0), without waiting: the next
     * connect's SYN is dropped until there is room. */
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fill[FILL];
    for (int i = 0; i < FILL; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        CHECK_GE(fill[i], 0);
        CHECK(connect(fill[i], (struct sockaddr *)&to, sizeof to) == 0 || errno == EINPROGRESS);
    }
    cap_sleep_ns(50 * 1000 * 1000);
    int before = atomic_load(&handled);
    cap_thread_t t = spawn(connector, NULL);
    while (!atomic_load(&connecting))
        cap_sleep_ns(1000 * 1000);
    cap_sleep_ns(20 * 1000 * 1000); /* in the connect */
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    await_handled(before + 1);
    /* Room: the connect completes at the client's next SYN. The accepts
     * do not wait (the listener is made non-blocking): the last may come
     * after the connector's, with nothing left to accept. */
    CHECK_EQ(fcntl(l, F_SETFL, O_NONBLOCK), 0);
    while (!atomic_load(&connected)) {
        int a = accept(l, NULL, NULL);
        if (a >= 0) {
            CHECK_EQ(close(a), 0);
        } else {
            CHECK_EQ(errno, EAGAIN);
            cap_sleep_ns(10 * 1000 * 1000);
        }
    }
    join(t);
    for (int i = 0; i < FILL; i++)
        CHECK_EQ(close(fill[i]), 0);
    CHECK_EQ(close(l), 0);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sa.sa_flags = SA_RESTART;
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    signalfd_reads();
    blocking_connect();
    return 0;
}

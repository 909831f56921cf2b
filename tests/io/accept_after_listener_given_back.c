/* SPDX-License-Identifier: MIT */
/* Description: a thread parked in accept() on a listener the runtime
 * made, which is then sent with SCM_RIGHTS (the runtime gives it back
 * its blocking mode: another process may share it now), and which looks
 * again with nothing queued (here a signal handler with SA_RESTART ran on
 * it), parks again instead of waiting in the kernel's accept; it takes
 * the next connection. Before, accept decided once per call that the
 * listener was the runtime's, so that look was the plain accept of a
 * blocking listener: it held the worker until a connection came, for
 * ever on one worker, where only main could connect. */
#include <signal.h>

#include "io/io_util.h"

static int listener;
static atomic_int accepting, handled;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *acceptor(void *arg)
{
    (void)arg;
    atomic_store(&accepting, 1);
    int c = accept(listener, NULL, NULL);
    CHECK_GE(c, 0);
    char b = 0;
    CHECK_EQ(read(c, &b, 1), 1);
    CHECK_EQ(b, 'c');
    CHECK_EQ(close(c), 0);
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    int port;
    listener = tcp_listener(SOCK_STREAM, 16, &port);
    cap_thread_t t = spawn(acceptor, NULL);
    while (atomic_load(&accepting) == 0)
        cap_sleep_ns(100000);
    cap_sleep_ns(2000000); /* it parks first */

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    send_fd(sv[0], listener);
    CHECK_EQ(kernel_nonblock(listener), 0); /* given back */
    int copy = recv_fd(sv[1]);

    /* The acceptor looks again, with nothing queued. */
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    while (atomic_load(&handled) == 0)
        cap_sleep_ns(100000);
    cap_sleep_ns(2000000); /* and parks again */

    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    CHECK_EQ(write(c, "c", 1), 1);
    join(t);
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(copy), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    CHECK_EQ(close(listener), 0);
    return 0;
}

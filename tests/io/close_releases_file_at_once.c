/* SPDX-License-Identifier: MIT */
/* Description: close() of a socket releases it before it returns, as on
 * NPTL, even while another worker waits in the backend with that socket
 * among the descriptors it watches, or armed the backend's watch of it:
 * the peer reads EOF right after the close. A thread waits in recv on
 * the socket (on main's worker or on the other: the worker idle on the
 * other side, holding the backend, watches it; or that thread's worker
 * armed the io_uring poll), main sleeps a little (its own worker idles
 * meanwhile), then closes the socket. Before the fixes, under
 * CAP_NETIO=poll the other worker's ppoll held the file until it woke,
 * and under CAP_NETIO=uring the poll armed by another worker's kernel
 * thread did, until that thread next entered the kernel: the peer saw no
 * EOF (a raw recv said EAGAIN). The peer is read by raw system calls,
 * which do not wake the backend. 100 rounds. */
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 100 };

struct round {
    int fd;
    atomic_int started;
};

static void *wait_in_recv(void *arg)
{
    struct round *r = arg;
    char c;
    atomic_store(&r->started, 1);
    errno = 0;
    CHECK_EQ(recv(r->fd, &c, 1, 0), -1); /* ended by the close */
    CHECK_EQ(errno, EBADF);
    return NULL;
}

int main(void)
{
    int port;
    int l = tcp_listener(SOCK_STREAM, 16, &port);
    for (int i = 0; i < ROUNDS; i++) {
        struct round r = { .fd = tcp_connect(port) };
        CHECK_GE(r.fd, 0);
        int peer = accept(l, NULL, NULL);
        CHECK_GE(peer, 0);
        cap_thread_t t = spawn(wait_in_recv, &r);
        while (atomic_load(&r.started) == 0)
            cap_yield();
        cap_sleep_ns(1000000); /* the waiter parks; the workers settle */
        CHECK_EQ(close(r.fd), 0);
        /* Released: the peer has its EOF now. */
        char c;
        CHECK_EQ(syscall(SYS_recvfrom, peer, &c, 1, MSG_DONTWAIT, NULL, NULL), 0);
        join(t);
        CHECK_EQ(close(peer), 0);
    }
    CHECK_EQ(close(l), 0);
    return 0;
}

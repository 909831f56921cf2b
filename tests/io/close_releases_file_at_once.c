/* SPDX-License-Identifier: MIT */
/* Description: close() of a socket releases it before it returns, as on
 * NPTL, even while another worker waits in the backend with that socket
 * among the descriptors it watches: the peer reads EOF right after the
 * close. A thread on main's worker waits in recv on the socket (so the
 * other worker, idle and holding the backend, watches it), main sleeps a
 * little (its own worker idles on its futex meanwhile), then closes the
 * socket. Under CAP_NETIO=poll with two workers the other worker's ppoll
 * held the file until it woke: the peer saw no EOF (a raw recv said
 * EAGAIN) in most rounds. The peer is read by raw system calls, which do
 * not wake the backend. 100 rounds; rounds whose waiter started on the
 * other worker are skipped (with one worker every round runs and must
 * pass too). Skipped under CAP_NETIO=uring with CAP_MIGRATE=1: a uring
 * poll is released by the kernel thread that armed it, which a moved
 * waiter may not share with main (README, Limits). */
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 100 };

struct round {
    int fd;
    atomic_int worker; /* the waiter's, + 1 once it runs */
};

static void *wait_in_recv(void *arg)
{
    struct round *r = arg;
    char c;
    atomic_store(&r->worker, cap_worker_id() + 1);
    errno = 0;
    CHECK_EQ(recv(r->fd, &c, 1, 0), -1); /* ended by the close */
    CHECK_EQ(errno, EBADF);
    return NULL;
}

int main(void)
{
    const char *net = getenv("CAP_NETIO"), *migrate = getenv("CAP_MIGRATE");
    if (net != NULL && strcmp(net, "uring") == 0 && migrate != NULL && strcmp(migrate, "1") == 0) {
        printf("skipped: a uring poll is released by the worker that armed it (README, Limits)\n");
        return 77;
    }
    int port;
    int l = tcp_listener(SOCK_STREAM, 16, &port);
    int ran = 0;
    for (int i = 0; i < ROUNDS; i++) {
        struct round r = { .fd = tcp_connect(port) };
        CHECK_GE(r.fd, 0);
        int peer = accept(l, NULL, NULL);
        CHECK_GE(peer, 0);
        cap_thread_t t = spawn(wait_in_recv, &r);
        while (atomic_load(&r.worker) == 0)
            cap_yield();
        bool here = atomic_load(&r.worker) - 1 == cap_worker_id();
        cap_sleep_ns(1000000); /* the waiter parks; the workers settle */
        CHECK_EQ(close(r.fd), 0);
        if (here) {
            /* Released: the peer has its EOF now. */
            char c;
            CHECK_EQ(syscall(SYS_recvfrom, peer, &c, 1, MSG_DONTWAIT, NULL, NULL), 0);
            ran++;
        }
        join(t);
        CHECK_EQ(close(peer), 0);
    }
    CHECK_EQ(close(l), 0);
    printf("%d of %d rounds with the waiter on main's worker\n", ran, ROUNDS);
    CHECK_GT(ran, 0);
    return 0;
}

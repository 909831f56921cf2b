/* SPDX-License-Identifier: MIT */
/* Description: shutdown of a listening socket ends the accept of every
 * thread blocked in it with EINVAL, as the kernel's blocked accepts end,
 * on a listener the runtime made and on one it did not (raw system
 * calls, as an inherited one). Before (session 65), the shutdown woke
 * the first parked acceptor only, as a connection does (one wakes per
 * connection), and an error did not pass the wake-up on as a success
 * does: the other acceptors waited for good (here: join hung). */
#include "io/io_util.h"

enum { ACCEPTORS = 8 };

static int listener;
static atomic_int entered;

static void *acceptor(void *arg)
{
    (void)arg;
    atomic_fetch_add(&entered, 1);
    int c = accept(listener, NULL, NULL);
    CHECK_EQ(c, -1);
    CHECK_EQ(errno, EINVAL);
    return NULL;
}

static void every_accept_ends(int l, int how)
{
    listener = l;
    atomic_store(&entered, 0);
    cap_thread_t t[ACCEPTORS];
    for (int i = 0; i < ACCEPTORS; i++)
        t[i] = spawn(acceptor, NULL);
    while (atomic_load(&entered) < ACCEPTORS)
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* they park */
    CHECK_EQ(shutdown(l, how), 0);
    for (int i = 0; i < ACCEPTORS; i++)
        join(t[i]);
    CHECK_EQ(close(l), 0);
}

int main(void)
{
    int port;
    every_accept_ends(tcp_listener(SOCK_STREAM, 16, &port), SHUT_RDWR);
    every_accept_ends(tcp_listener(SOCK_STREAM, 16, &port), SHUT_RD);
    every_accept_ends(raw_tcp_listener(16, &port), SHUT_RDWR);
    every_accept_ends(raw_tcp_listener(16, &port), SHUT_RD);
    return 0;
}

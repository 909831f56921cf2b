/* SPDX-License-Identifier: MIT */
/* Description: code that runs at exit after the library's own last step
 * (a destructor of a library later on the link line: latefini/) still
 * wakes user threads parked on descriptors: it writes an eventfd, sends
 * on a socketpair and connects to a listener, each waited on by a thread
 * parked there since before the exit, and joins the three. Under
 * CAP_NETIO=uring the exit cancels every poll of the ring (so sockets
 * close with the process, io/exit_closes_sockets_at_once): the waits
 * armed then would never see these events, and the join hung; the
 * descriptors the backend no longer watches now wake their waiters,
 * which wait the unwatched way (poll(2) on their worker). */
#include <sys/eventfd.h>

#include "io/io_util.h"

void late_fini_register(void (*fn)(void));

static int efd, sv[2], listener, port;
static cap_thread_t threads[3];
static atomic_int parked;

static void *eventfd_reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    uint64_t v;
    CHECK_EQ(read(efd, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(v, 5);
    return NULL;
}

static void *socket_reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    char c;
    CHECK_EQ(recv(sv[0], &c, 1, 0), 1);
    CHECK_EQ(c, 's');
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    int c = accept(listener, NULL, NULL);
    CHECK_GE(c, 0);
    CHECK_EQ(close(c), 0);
    return NULL;
}

/* Run by latefini's destructor. */
static void wake_and_join(void)
{
    uint64_t five = 5;
    CHECK_EQ(write(efd, &five, sizeof five), (ssize_t)sizeof five);
    CHECK_EQ(send(sv[1], "s", 1, 0), 1);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    for (int i = 0; i < 3; i++)
        join(threads[i]);
    CHECK_EQ(close(c), 0);
    fprintf(stderr, "late destructor: woke and joined the three\n");
}

int main(void)
{
    efd = eventfd(0, 0);
    CHECK_GE(efd, 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    listener = tcp_listener(SOCK_STREAM, 4, &port);
    threads[0] = spawn(eventfd_reader, NULL);
    threads[1] = spawn(socket_reader, NULL);
    threads[2] = spawn(acceptor, NULL);
    while (atomic_load(&parked) < 3)
        cap_yield();
    for (int i = 0; i < 100; i++)
        cap_yield(); /* parked in their calls, most likely (either way must work) */
    late_fini_register(wake_and_join);
    return 0;
}

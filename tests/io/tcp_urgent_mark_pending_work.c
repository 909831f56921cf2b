/* SPDX-License-Identifier: MIT */
/* Description: a blocking read stopped at a TCP urgent mark gets the
 * data past the mark, whose event was harvested before the read, even
 * when its kernel thread has io_uring work pending. At the mark Linux's
 * read says EAGAIN while a signal is pending, and a poll completion
 * waiting to run on the thread counts as one: under CAP_NETIO=uring a
 * write (by another kernel thread) to a socket this worker registered
 * leaves such work until the worker's next system call, which is the
 * read. The runtime parked on that EAGAIN and waited for an event that
 * had come already: the test hung (io/wait.c, urgent_mark_hides_data).
 * Under the other backends nothing is pending and the reads just pass. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "io/io_util.h"

enum { ROUNDS = 40, SETTLE_NS = 20000000 };

struct round {
    int urgent_sender; /* the client end of the connection under test */
    int trigger;       /* the client end of the one the reader registered */
    atomic_int go, done;
};

/* Not a user thread: its write reaches the kernel while the worker runs
 * user code, so the completion it causes waits for the worker. */
static void *foreign_writer(void *arg)
{
    struct round *r = arg;
    CHECK_EQ(write(r->urgent_sender, "ab", 2), 2);
    CHECK_EQ(send(r->urgent_sender, "X", 1, MSG_OOB), 1);
    CHECK_EQ(write(r->urgent_sender, "c", 1), 1);
    CHECK_EQ(write(r->trigger, "1", 1), 1); /* wakes the reader's first park */
    while (!atomic_load(&r->go))
        ;
    CHECK_EQ(write(r->trigger, "2", 1), 1);
    atomic_store(&r->done, 1);
    return NULL;
}

static void one_round(int l, int port)
{
    struct round r = { 0 };
    r.urgent_sender = tcp_connect(port);
    CHECK_GE(r.urgent_sender, 0);
    int one = 1;
    CHECK_EQ(setsockopt(r.urgent_sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    r.trigger = tcp_connect(port);
    CHECK_GE(r.trigger, 0);
    int t = accept(l, NULL, NULL);
    CHECK_GE(t, 0);

    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, foreign_writer, &r), 0);
    char buf[64];
    read_exactly_n(c, buf, sizeof buf, 2); /* "ab": a read stops at the mark */
    CHECK(memcmp(buf, "ab", 2) == 0);
    CHECK_EQ(read(t, buf, 1), 1); /* parks: this worker registers t */
    CHECK_EQ(buf[0], '1');
    cap_sleep_ns(SETTLE_NS); /* the events of "X" and "c" harvested */

    atomic_store(&r.go, 1);
    while (!atomic_load(&r.done)) /* no system call: the completion waits */
        ;
    CHECK_EQ(read(c, buf, sizeof buf), 1); /* the urgent byte is out of band */
    CHECK_EQ(buf[0], 'c');
    CHECK_EQ(read(t, buf, 1), 1);
    CHECK_EQ(buf[0], '2');

    CHECK_EQ(pthread_join(kt, NULL), 0);
    close(t);
    close(r.trigger);
    close(c);
    close(r.urgent_sender);
}

int main(void)
{
    int port;
    int l = tcp_listener(SOCK_STREAM, 8, &port);
    for (int i = 0; i < ROUNDS; i++)
        one_round(l, port);
    close(l);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: with every worker kept busy by yielding threads, a thread
 * parked in read() on a socket is still woken when a kernel thread the
 * runtime does not run writes to it: no worker is idle to harvest the
 * event, so only the busy workers' periodic poll can, and it polls only
 * while the count of parked I/O waits (kept per worker, summed) says some
 * wait. Before that, threads park and wake thousands of times in a
 * ping-pong; under CAP_MIGRATE=1 (also registered so) many of those waits
 * end on another worker than they began on, so one worker's count goes
 * below zero and only the sum is right. A wrong count hangs the reader
 * (the test times out). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "io/io_util.h"

enum { ROUNDS = 2000, YIELDERS = 4 };

static int pp[2], sv[2];
static atomic_bool done;

static void *pinger(void *arg)
{
    int fd = pp[(intptr_t)arg];
    char c = 'x';
    for (int i = 0; i < ROUNDS; i++) {
        if ((intptr_t)arg == 0)
            CHECK_EQ(write(fd, &c, 1), 1);
        CHECK_EQ(read(fd, &c, 1), 1);
        if ((intptr_t)arg == 1)
            CHECK_EQ(write(fd, &c, 1), 1);
    }
    return NULL;
}

static void *yielder(void *arg)
{
    (void)arg;
    while (!atomic_load(&done))
        cap_yield();
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    char buf[8] = { 0 };
    CHECK_EQ(read(sv[0], buf, sizeof buf), 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    atomic_store(&done, true);
    return NULL;
}

static void *kernel_writer(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0); /* not a user thread */
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL); /* the reader parks, the yielders fill the workers */
    CHECK_EQ(write(sv[1], "hello", 5), 5);
    return NULL;
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pp), 0);
    cap_thread_t a = spawn(pinger, (void *)0), b = spawn(pinger, (void *)1);
    join(a);
    join(b);

    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cap_thread_t r = spawn(reader, NULL);
    cap_thread_t y[YIELDERS];
    for (int i = 0; i < YIELDERS; i++)
        y[i] = spawn(yielder, NULL);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, kernel_writer, NULL), 0);
    join(r);
    for (int i = 0; i < YIELDERS; i++)
        join(y[i]);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: reads parked with SO_RCVTIMEO, the timers that join the
 * timer FIFO lanes (sched/timer.h): threads with two timeouts (40 and
 * 70 ms) park in turns, so both lanes fill in arming order, while others
 * sleep for assorted shorter and longer times (the heap) and every third
 * reader is given data before its time runs out (a cancel from the middle
 * of a lane). Every reader without data fails with EAGAIN no earlier
 * than its timeout after it began, every reader with data gets it (after
 * a timeout that was not early, if main fed it late), every
 * sleeper sleeps at least as asked; a timer lost from a lane hangs the
 * test (timeout), one fired early fails it. */
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/time.h>
#include <time.h>

#include "io/io_util.h"

enum { READERS = 300, SLEEPERS = 60 };
static const uint64_t MS = 1000000;

struct reader {
    int sv[2];
    uint64_t timeout;
    bool fed;
    atomic_int parked;
};

static struct reader readers[READERS];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *read_with_timeout(void *arg)
{
    struct reader *r = arg;
    struct timeval tv = { 0, (suseconds_t)(r->timeout / 1000) };
    CHECK_EQ(setsockopt(r->sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    char c = 0;
    uint64_t began = now_ns();
    atomic_store(&r->parked, 1);
    ssize_t n = read(r->sv[1], &c, 1);
    if (r->fed) {
        if (n == -1) {
            /* main fed it only after its timeout (a loaded machine): the
             * timeout must still not be early, and the data must come. */
            CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
            CHECK_GE(now_ns() - began, r->timeout);
            struct timeval none = { 0, 0 };
            CHECK_EQ(setsockopt(r->sv[1], SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none), 0);
            n = read(r->sv[1], &c, 1);
        }
        CHECK_EQ(n, 1);
        CHECK_EQ(c, 'd');
    } else {
        CHECK_EQ(n, -1);
        CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
        CHECK_GE(now_ns() - began, r->timeout);
    }
    return NULL;
}

static void *sleeper(void *arg)
{
    uint64_t d = (uint64_t)(uintptr_t)arg;
    uint64_t began = now_ns();
    struct timespec ts = { 0, (long)d };
    CHECK_EQ(nanosleep(&ts, NULL), 0);
    CHECK_GE(now_ns() - began, d);
    return NULL;
}

int main(void)
{
    raise_nofile(2 * READERS + 64);
    for (int round = 0; round < 3; round++) {
        cap_thread_t rt[READERS], st[SLEEPERS];
        for (int i = 0; i < READERS; i++) {
            struct reader *r = &readers[i];
            CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, r->sv), 0);
            r->timeout = (i % 2 ? 70 : 40) * MS;
            r->fed = i % 3 == 0;
            atomic_store(&r->parked, 0);
            rt[i] = spawn(read_with_timeout, r);
            if (i % 5 == 0 && i / 5 < SLEEPERS)
                st[i / 5] = spawn(sleeper, (void *)(uintptr_t)((uint64_t)(i % 7 + 1) * 13 * MS));
            cap_yield();
        }
        for (int i = 0; i < READERS; i++) {
            while (!atomic_load(&readers[i].parked))
                cap_yield();
            if (readers[i].fed)
                CHECK_EQ(write(readers[i].sv[0], "d", 1), 1);
        }
        for (int i = 0; i < READERS; i++) {
            join(rt[i]);
            close(readers[i].sv[0]);
            close(readers[i].sv[1]);
        }
        for (int i = 0; i < SLEEPERS; i++)
            join(st[i]);
    }
    return 0;
}

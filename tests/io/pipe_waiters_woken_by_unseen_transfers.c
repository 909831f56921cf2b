/* SPDX-License-Identifier: MIT */
/* Description: threads parked on a pipe the runtime made are woken by
 * transfers that go around the wrappers, so only the backend can see
 * them (the uring backend arms such pipes only while a thread waits),
 * once the pipe stopped being private (io/pipe.h: here a dup of one end,
 * as anything that could hand it to such code does; raw system calls on
 * a private pipe are a documented blind spot):
 * four readers parked on one pipe all get their byte when a raw write
 * system call puts four bytes in at once, then the same for one byte at
 * a time, and a writer parked on a full pipe finishes when raw read
 * system calls drain it. */
#include <string.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { READERS = 4 };

static int p[2];

static void *read_byte(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'x');
    return NULL;
}

static char big[1 << 20];

static void *write_big(void *arg)
{
    (void)arg;
    CHECK_EQ(write(p[1], big, sizeof big), (ssize_t)sizeof big);
    return NULL;
}

static void readers_round(int one_at_a_time)
{
    cap_thread_t t[READERS];
    for (int i = 0; i < READERS; i++)
        t[i] = spawn(read_byte, NULL);
    cap_sleep_ns(20 * 1000 * 1000); /* let them park (the test holds either way) */
    if (one_at_a_time) {
        for (int i = 0; i < READERS; i++)
            CHECK_EQ(syscall(SYS_write, p[1], "x", 1), 1);
    } else {
        CHECK_EQ(syscall(SYS_write, p[1], "xxxx", READERS), READERS);
    }
    for (int i = 0; i < READERS; i++)
        join(t[i]);
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    int d = dup(p[1]);
    CHECK(d >= 0);
    CHECK_EQ(close(d), 0);
    readers_round(0);
    readers_round(1);

    memset(big, 'y', sizeof big);
    cap_thread_t w = spawn(write_big, NULL);
    cap_sleep_ns(20 * 1000 * 1000); /* it fills the pipe and parks */
    static char sink[1 << 16];
    size_t got = 0;
    while (got < sizeof big) {
        long r = syscall(SYS_read, p[0], sink, sizeof sink);
        if (r < 0 && errno == EAGAIN) { /* owned pipes are non-blocking underneath */
            cap_sleep_ns(1000 * 1000);
            continue;
        }
        CHECK(r > 0);
        got += (size_t)r;
    }
    join(w);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

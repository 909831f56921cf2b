/* SPDX-License-Identifier: MIT */
/* Description: a descriptor number closed and reused never receives the
 * old file's events: after closing a socket (whose file lives on through
 * a dup) and getting the same number back from pipe(), traffic on the old
 * socket does not wake the thread now reading the pipe, which gets the
 * pipe's data and only that. Repeated many times to catch races. */
#include <poll.h>
#include <stdatomic.h>
#include <string.h>

#include "io/io_util.h"

static int rd;
static atomic_int phase;

static void *reader(void *arg)
{
    (void)arg;
    char buf[16] = { 0 };
    atomic_store(&phase, 1);
    ssize_t n = read(rd, buf, sizeof buf);
    CHECK_EQ(n, 4);
    CHECK(memcmp(buf, "pipe", 4) == 0);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < 200; round++) {
        int sv[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        int keep = dup(sv[0]); /* the old file outlives its number */
        /* Make sv[0] known to the backend: wait on it once. */
        struct pollfd p = { .fd = sv[0], .events = POLLIN };
        CHECK_EQ(poll(&p, 1, 1), 0);
        int old = sv[0];
        CHECK_EQ(close(sv[0]), 0);
        int pv[2];
        CHECK_EQ(pipe(pv), 0);
        CHECK_EQ(pv[0], old); /* the lowest free number comes back */
        rd = pv[0];
        atomic_store(&phase, 0);
        cap_thread_t t = spawn(reader, NULL);
        while (atomic_load(&phase) == 0)
            cap_yield();
        cap_yield();
        CHECK_EQ(write(sv[1], "sock", 4), 4); /* an event for the old file */
        cap_yield();
        CHECK_EQ(write(pv[1], "pipe", 4), 4);
        join(t);
        close(pv[0]);
        close(pv[1]);
        close(sv[1]);
        close(keep);
    }
    return 0;
}

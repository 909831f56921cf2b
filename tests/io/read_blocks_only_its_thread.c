/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in read() on an empty pipe parks only
 * itself: on CAP_WORKERS=1 other threads keep running, and the write that
 * ends the wait comes from one of them. If read() blocked the kernel
 * thread, the test would hang (and time out). */
#include <stdatomic.h>
#include <string.h>

#include "io/io_util.h"

static int p[2];
static atomic_int progress;

static void *reader(void *arg)
{
    (void)arg;
    char buf[16] = { 0 };
    ssize_t n = read(p[0], buf, sizeof buf);
    CHECK_EQ(n, 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK_GE(atomic_load(&progress), 1000); /* the others ran meanwhile */
    return NULL;
}

static void *busy(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        atomic_fetch_add(&progress, 1);
        cap_yield();
    }
    CHECK_EQ(write(p[1], "hello", 5), 5);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    cap_thread_t r = spawn(reader, NULL);
    cap_yield(); /* let the reader block first (it may not: either order works) */
    cap_thread_t b = spawn(busy, NULL);
    join(b);
    join(r);
    /* The same with a socketpair and a sleeping writer. */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(p[0]);
    close(p[1]);
    p[0] = sv[0];
    p[1] = sv[1];
    atomic_store(&progress, 0);
    r = spawn(reader, NULL);
    b = spawn(busy, NULL);
    join(r);
    join(b);
    return 0;
}

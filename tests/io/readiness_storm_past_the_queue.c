/* SPDX-License-Identifier: MIT */
/* Description: more descriptors turn ready at once than the backend's
 * completion queue holds (CAP_NETIO=uring: 2,048 entries), and every
 * waiter still gets its data. A thread waits to read on each of 4,096
 * sockets, then one thread writes a byte to all of them without
 * yielding, so the readiness piles up unharvested. Under uring the
 * surplus overflowed, which ends those multishot polls; the harvest
 * re-armed each one while the queue was still full of the completions
 * it had not yet released, so each re-armed poll, finding its socket
 * ready, overflowed and ended again: the worker looped in the harvest
 * for good (seen as a hang of io/tcp_loopback_10k's client process). */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io_util.h"

enum { PAIRS = 4096 };

static int ends[PAIRS][2];

static void *reader(void *arg)
{
    long i = (long)arg;
    char c;
    CHECK_EQ(read(ends[i][0], &c, 1), 1);
    CHECK_EQ(c, (char)i);
    return NULL;
}

int main(void)
{
    if (raise_nofile(2 * PAIRS + 200) < 2 * PAIRS + 100)
        SKIP("RLIMIT_NOFILE hard limit below 8,292");
    static cap_thread_t t[PAIRS];
    for (long i = 0; i < PAIRS; i++) {
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends[i]), 0);
        t[i] = spawn(reader, (void *)i);
    }
    /* Twice through the queue: every reader has parked (its socket
     * watched) before the writes begin. */
    for (int round = 0; round < 2; round++)
        cap_yield();
    for (long i = 0; i < PAIRS; i++) {
        char c = (char)i;
        CHECK_EQ(syscall(SYS_write, ends[i][1], &c, 1), 1);
    }
    for (long i = 0; i < PAIRS; i++) {
        join(t[i]);
        CHECK_EQ(close(ends[i][0]), 0);
        CHECK_EQ(close(ends[i][1]), 0);
    }
    printf("ok: %d readers\n", PAIRS);
    return 0;
}

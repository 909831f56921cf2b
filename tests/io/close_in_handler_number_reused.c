/* SPDX-License-Identifier: MIT */
/* Description: a socket closed inside a signal handler while a reader
 * waits on it, its number taken at once by a new socket (before the
 * runtime applies the close it queued from the handler): the closed
 * socket's peer must read EOF. The new life began without ending the old
 * one's registration, and under CAP_NETIO=uring that poll held the closed
 * file open for good (its peer never saw EOF, nearly every round). A
 * reader that comes to the number only after the reuse (a loaded
 * machine) reads the new socket instead, and gets a byte written there;
 * at least one round must have had it parked. */
#include <signal.h>
#include <stdbool.h>

#include "io/io_util.h"

enum { ROUNDS = 30 };

static int victim;

static void on_usr1(int sig)
{
    (void)sig;
    close(victim);
}

/* 1 if its wait was ended by the close (EBADF); 0 if it came too late
 * (a loaded machine) and read the new socket that took the number. */
static void *reader(void *arg)
{
    char c;
    ssize_t r = read(*(int *)arg, &c, 1);
    CHECK(r == 1 || (r < 0 && errno == EBADF));
    return (void *)(intptr_t)(r < 0);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    int cases = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int a[2], b[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
        victim = a[0];
        cap_thread_t t = spawn(reader, &a[0]);
        cap_usleep(2000); /* the reader parks: a[0] is armed */
        CHECK_EQ(raise(SIGUSR1), 0); /* the handler closes a[0] */
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
        bool reused = b[0] == a[0] || b[1] == a[0];
        if (reused) /* a reader not yet parked reads the new socket: this ends it */
            CHECK_EQ(write(b[0] == a[0] ? b[1] : b[0], "x", 1), 1);
        bool ended_by_close = join(t) != NULL;
        cases += reused && ended_by_close;
        struct pollfd pfd = { .fd = a[1], .events = POLLIN };
        CHECK_EQ(poll(&pfd, 1, 10000), 1); /* a's close reached its file */
        char c;
        CHECK_EQ(read(a[1], &c, 1), 0);
        CHECK_EQ(close(a[1]), 0);
        CHECK_EQ(close(b[0]), 0);
        CHECK_EQ(close(b[1]), 0);
    }
    CHECK_GT(cases, 0); /* the case this test is about happened */
    return 0;
}

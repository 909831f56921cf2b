/* SPDX-License-Identifier: MIT */
/* Description: calls parked in read() before the program installed any
 * signal handler (so they parked without entering the signal registry,
 * io/sigintr.h) are interrupted by the first handler's signal: a handler
 * installed without SA_RESTART after they parked gives each of them EINTR
 * (a socket, a pipe and a socket with SO_RCVTIMEO), and a reader that
 * parks after the handler exists is interrupted too. Each delivery
 * interrupts at most one call, so the signal is sent until all have
 * returned. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/time.h>

#include "io/io_util.h"

enum { READERS = 4 };

static volatile sig_atomic_t count;
static void on_usr1(int sig)
{
    (void)sig;
    count++;
}

static int fds[READERS];
static atomic_int in[READERS], done[READERS];
static long result[READERS];
static int err[READERS];

static void *reader(void *arg)
{
    long i = (long)arg;
    char byte;
    atomic_store(&in[i], 1);
    result[i] = read(fds[i], &byte, 1);
    err[i] = errno;
    atomic_store(&done[i], 1);
    return NULL;
}

static bool all_done(int n)
{
    for (int i = 0; i < n; i++)
        if (!atomic_load(&done[i]))
            return false;
    return true;
}

int main(void)
{
    int sv[2], p[2], tv_sv[2], late[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, tv_sv), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
    struct timeval tv = { .tv_sec = 1000 };
    CHECK_EQ(setsockopt(tv_sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    fds[0] = sv[0];
    fds[1] = p[0];
    fds[2] = tv_sv[0];
    fds[3] = late[0];

    cap_thread_t t[READERS];
    for (long i = 0; i < READERS - 1; i++) {
        t[i] = spawn(reader, (void *)i);
        while (!atomic_load(&in[i]))
            cap_yield();
    }
    cap_sleep_ns(20000000); /* let them reach their waits */
    for (int i = 0; i < READERS - 1; i++)
        CHECK_EQ(atomic_load(&done[i]), 0);

    /* The program's first handler, without SA_RESTART. */
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = 0 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    t[READERS - 1] = spawn(reader, (void *)(long)(READERS - 1));
    while (!atomic_load(&in[READERS - 1]))
        cap_yield();

    while (!all_done(READERS)) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(1000000);
    }
    for (int i = 0; i < READERS; i++) {
        join(t[i]);
        fprintf(stderr, "reader %d: %ld, errno %d\n", i, result[i], err[i]);
        CHECK_EQ(result[i], -1);
        CHECK_EQ(err[i], EINTR);
    }
    CHECK_GT(count, 0);
    return 0;
}

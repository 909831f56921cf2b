/* SPDX-License-Identifier: MIT */
/* Description: a process-directed signal interrupts exactly one parked
 * call: the main thread's when main is parked in one (main blocked in
 * accept, a SIGINT handler sets a flag, accept fails with EINTR and the
 * loop sees the flag), else the call that has waited longest. The other
 * parked readers are not disturbed and later read their data. Runs on
 * one worker, where "everyone is parked" is certain when the sender runs. */
#include <signal.h>
#include <stdatomic.h>

#include "io/io_util.h"

enum { NREADERS = 3 };

static volatile sig_atomic_t stop;
static void on_int(int sig)
{
    (void)sig;
    stop = 1;
}

static int pipes[NREADERS][2];
static long results[NREADERS];
static int errs[NREADERS];
static atomic_int finished[NREADERS];

static void *reader(void *arg)
{
    long i = (long)arg;
    char c = 0;
    long r = read(pipes[i][0], &c, 1);
    errs[i] = errno;
    results[i] = r == 1 ? c : r;
    atomic_store(&finished[i], 1);
    return NULL;
}

static void *sender(void *arg)
{
    (void)arg; /* runs once main and the readers are parked (one worker) */
    CHECK_EQ(kill(getpid(), SIGINT), 0);
    return NULL;
}

int main(void)
{
    if (cap_worker_count() != 1)
        SKIP("needs CAP_WORKERS=1 for a known order"); /* tests.cmake runs it so */
    struct sigaction sa = { .sa_handler = on_int };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGINT, &sa, NULL), 0);
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    cap_thread_t t[NREADERS];
    for (long i = 0; i < NREADERS; i++) {
        CHECK_EQ(pipe(pipes[i]), 0);
        t[i] = spawn(reader, (void *)i);
    }
    cap_thread_t s = spawn(sender, NULL);

    /* The server loop of the idiom. */
    int accepted = 0;
    while (!stop) {
        int c = accept(l, NULL, NULL);
        if (c < 0) {
            CHECK_EQ(errno, EINTR);
            continue;
        }
        accepted++;
    }
    CHECK_EQ(accepted, 0);
    join(s);
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ(atomic_load(&finished[i]), 0);

    /* Main is running now: the next signal goes to the longest waiter. */
    stop = 0;
    CHECK_EQ(kill(getpid(), SIGINT), 0);
    while (!atomic_load(&finished[0]) && !atomic_load(&finished[1]) &&
           !atomic_load(&finished[2]))
        cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&finished[0]), 1);
    CHECK_EQ(stop, 1);
    CHECK_EQ(results[0], -1);
    CHECK_EQ(errs[0], EINTR);
    join(t[0]);
    for (int i = 1; i < NREADERS; i++) {
        CHECK_EQ(atomic_load(&finished[i]), 0);
        CHECK_EQ(write(pipes[i][1], "d", 1), 1);
        join(t[i]);
        CHECK_EQ(results[i], 'd');
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Condition-variable ping-pong: two threads hand a token back and forth
 * with one mutex and two condition variables. Reports nanoseconds per
 * round trip (two hand-offs).
 *
 * Usage: pingpong [seconds]
 *
 * The pinger holds the mutex except while it waits; each round it passes
 * the token (turn = 1), signals the ponger and waits until the token comes
 * back. The ponger does the mirror image. The pinger keeps time in
 * batches (common.h) and ends the game by raising `stop`.
 */
#include <pthread.h>

#include "common.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t to_ping = PTHREAD_COND_INITIALIZER;
static pthread_cond_t to_pong = PTHREAD_COND_INITIALIZER;
static int turn; /* 0: the pinger holds the token, 1: the ponger */
static int stop;

static void rounds(uint64_t n, void *ctx)
{
    (void)ctx;
    for (uint64_t i = 0; i < n; i++) {
        turn = 1;
        pthread_cond_signal(&to_pong);
        while (turn == 1)
            pthread_cond_wait(&to_ping, &mu);
    }
}

static double secs;
static uint64_t result_ops, result_ns;

static void *pinger(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    result_ops = bench_run_for(secs, rounds, NULL, &result_ns);
    stop = 1;
    pthread_cond_signal(&to_pong);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *ponger(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (turn == 0 && !stop)
            pthread_cond_wait(&to_pong, &mu);
        if (stop)
            break;
        turn = 0;
        pthread_cond_signal(&to_ping);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char **argv)
{
    secs = bench_arg_secs(argc, argv, 1, 0.5);
    pthread_t a, b;
    bench_check(pthread_create(&b, NULL, ponger, NULL), "pthread_create");
    bench_check(pthread_create(&a, NULL, pinger, NULL), "pthread_create");
    bench_check(pthread_join(a, NULL), "pthread_join");
    bench_check(pthread_join(b, NULL), "pthread_join");
    bench_report("pingpong", 2, result_ops, result_ns, "");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Producer-consumer, the Capriccio paper's Figure 1: equal numbers of
 * producers and consumers around one bounded buffer guarded by a mutex and
 * two condition variables (not-full, not-empty). Producers put empty
 * messages in; a consumer takes one and "processes" it by spinning a
 * random number of iterations. Reports messages per second over a fixed
 * duration.
 *
 * Usage: prodcons [seconds] [threads total] [buffer slots] [mean spin]
 *   defaults:       1          2                64           100
 *
 * The spin is a chain of multiply-adds of pseudo-random length, uniform in
 * [0, 2 * mean); the same generator and loop are in the Go peer
 * (bench/go), so both do the same work per message (about 110 ns for the
 * default mean of 100 steps on the 2.6 GHz EPYC this was written on).
 *
 * Timing: every thread is created first (they start working at once), and
 * left WARMUP_SECS to settle (first runs, stack pages faulted in); the
 * main thread then samples the message count, sleeps for the duration and
 * samples again. Creation and teardown are not counted, and teardown is
 * not waited for either: after the second sample the program reports and
 * exits. (Go, at GOMAXPROCS=1, needs minutes to drain 65,536 goroutines
 * through the one mutex after a broadcast; NPTL needs seconds.) Each
 * thread has a 64 KiB stack on every implementation, so 65,536 fit.
 */
#include <pthread.h>
#include <time.h>

#include "common.h"

enum { STACK_BYTES = 64 * 1024 };
#define WARMUP_SECS 0.25

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long slots, count;   /* buffer capacity and fill; messages are empty */
static uint64_t consumed;   /* under mu */
static uint32_t mean_spin;

/* The "processing": n steps of a linear congruential generator. The asm
 * keeps the compiler from collapsing the loop. Returns the new state,
 * which also seeds the next message's length. */
static uint32_t spin(uint32_t x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static void *producer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) { /* until the process exits */
        while (count == slots)
            pthread_cond_wait(&not_full, &mu);
        count++;
        pthread_cond_signal(&not_empty);
    }
    return NULL; /* not reached */
}

static void *consumer(void *arg)
{
    uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
    for (;;) { /* until the process exits */
        pthread_mutex_lock(&mu);
        while (count == 0)
            pthread_cond_wait(&not_empty, &mu);
        count--;
        consumed++;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&mu);
        x = x * 1664525u + 1013904223u; /* this message's length */
        x = spin(x, (x >> 8) % (2 * mean_spin));
    }
    return NULL; /* not reached */
}

static void sleep_secs(double secs)
{
    struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static uint64_t sample(void)
{
    pthread_mutex_lock(&mu);
    uint64_t c = consumed;
    pthread_mutex_unlock(&mu);
    return c;
}

int main(int argc, char **argv)
{
    double secs = bench_arg_secs(argc, argv, 1, 1.0);
    long nthreads = bench_arg_long(argc, argv, 2, 2);
    slots = bench_arg_long(argc, argv, 3, 64);
    mean_spin = (uint32_t)bench_arg_long(argc, argv, 4, 100);
    if (nthreads < 2 || nthreads % 2 != 0) {
        fprintf(stderr, "threads must be even and >= 2\n");
        return 2;
    }
    pthread_attr_t attr;
    bench_check(pthread_attr_init(&attr), "pthread_attr_init");
    bench_check(pthread_attr_setstacksize(&attr, STACK_BYTES), "pthread_attr_setstacksize");
    uint64_t tc = bench_now_ns();
    for (long i = 0; i < nthreads; i++) {
        void *(*fn)(void *) = i % 2 == 0 ? producer : consumer;
        pthread_t tid;
        int rc = pthread_create(&tid, &attr, fn, (void *)(uintptr_t)i);
        if (rc != 0) {
            fprintf(stderr, "pthread_create failed at thread %ld of %ld: %s\n", i, nthreads,
                    strerror(rc));
            exit(3);
        }
    }
    uint64_t create_ns = bench_now_ns() - tc;
    pthread_attr_destroy(&attr);

    sleep_secs(WARMUP_SECS);
    uint64_t c0 = sample(), t0 = bench_now_ns(), cpu0 = bench_cpu_ns();
    sleep_secs(secs);
    uint64_t c1 = sample(), t1 = bench_now_ns();
    bench_cpu_used = bench_cpu_ns() - cpu0;

    char extra[160];
    snprintf(extra, sizeof extra, "\"msgs_per_sec\":%.1f,\"create_ns\":%llu,\"slots\":%ld",
             (double)(c1 - c0) * 1e9 / (double)(t1 - t0), (unsigned long long)create_ns, slots);
    bench_report("prodcons", (int)nthreads, c1 - c0, t1 - t0, extra);
    exit(0); /* without joining: see the header comment */
}

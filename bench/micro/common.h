/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the micro-benchmarks in bench/micro/.
 *
 * Every benchmark is a plain pthread program: nothing here names the
 * library. The same source is built against NPTL and against Capriccio
 * (through -include capriccio/pthread.h), so this file may use only the C
 * library and the pthread names that the compatibility header maps.
 *
 * Timing: CLOCK_MONOTONIC around batches of operations. A batch grows by
 * doubling until it lasts about a millisecond, so reading the clock costs
 * well under 0.1% of the measured time even for nanosecond operations, and
 * a run lasts its requested duration whatever the speed of the thing
 * measured. The doubling phase doubles as the warm-up and is not counted.
 *
 * Output: one JSON object per run on stdout, which bench/runner.py reads:
 *   {"bench":..., "via":..., "threads":..., "ops":..., "elapsed_ns":...,
 *    "ns_per_op":..., "cpu_ns":...}
 * cpu_ns is the CPU time the whole process got while it was measured
 * (getrusage): compared with the elapsed time it shows how much of its
 * CPUs a run really had on a shared machine.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* How this binary reaches threads: "nptl", or "header" for Capriccio
 * through the compatibility header (set by bench/CMakeLists.txt). */
#ifndef BENCH_VIA
#define BENCH_VIA "nptl"
#endif

#define BENCH_BATCH_NS 1000000ull /* a batch lasts about 1 ms */

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* User + system CPU time of the process so far. */
static inline uint64_t bench_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

/* CPU time used during the measurement, for bench_report; set by
 * bench_run_for or by the program. */
static uint64_t bench_cpu_used;

/* argv[i] as seconds (a positive decimal), or dflt when absent. */
static inline double bench_arg_secs(int argc, char **argv, int i, double dflt)
{
    if (argc <= i)
        return dflt;
    double v = strtod(argv[i], NULL);
    if (!(v > 0)) {
        fprintf(stderr, "%s: bad duration \"%s\" (seconds, > 0)\n", argv[0], argv[i]);
        exit(2);
    }
    return v;
}

/* argv[i] as a positive whole number, or dflt when absent. */
static inline long bench_arg_long(int argc, char **argv, int i, long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 1) {
        fprintf(stderr, "%s: bad count \"%s\" (a whole number >= 1)\n", argv[0], argv[i]);
        exit(2);
    }
    return v;
}

/* Runs fn(n, ctx), which performs n operations, in batches for about secs
 * seconds after a warm-up; returns the operations counted and stores the
 * time they took in *elapsed_ns. */
typedef void (*bench_batch_fn)(uint64_t n, void *ctx);

static inline uint64_t bench_run_for(double secs, bench_batch_fn fn, void *ctx,
                                     uint64_t *elapsed_ns)
{
    /* Warm-up: find the batch size that lasts BENCH_BATCH_NS. */
    uint64_t batch = 1;
    for (;;) {
        uint64_t t = bench_now_ns();
        fn(batch, ctx);
        if (bench_now_ns() - t >= BENCH_BATCH_NS || batch >= (1ull << 40))
            break;
        batch *= 2;
    }
    uint64_t want = (uint64_t)(secs * 1e9);
    uint64_t ops = 0;
    uint64_t c0 = bench_cpu_ns();
    uint64_t t0 = bench_now_ns(), now;
    do {
        fn(batch, ctx);
        ops += batch;
        now = bench_now_ns();
    } while (now - t0 < want);
    *elapsed_ns = now - t0;
    bench_cpu_used = bench_cpu_ns() - c0;
    return ops;
}

/* Prints the result line. extra: more JSON members ("\"k\":v,..."), or "". */
static inline void bench_report(const char *bench, int threads, uint64_t ops,
                                uint64_t elapsed_ns, const char *extra)
{
    printf("{\"bench\":\"%s\",\"via\":\"%s\",\"threads\":%d,\"ops\":%llu,"
           "\"elapsed_ns\":%llu,\"ns_per_op\":%.4f,\"cpu_ns\":%llu%s%s}\n",
           bench, BENCH_VIA, threads, (unsigned long long)ops,
           (unsigned long long)elapsed_ns, ops ? (double)elapsed_ns / (double)ops : 0.0,
           (unsigned long long)bench_cpu_used, extra[0] ? "," : "", extra);
    fflush(stdout);
}

/* Reports a failed pthread call and exits with status 3 (the runner
 * records the run as failed, e.g. NPTL out of threads). */
static inline void bench_check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "%s failed: %s\n", what, strerror(rc));
        exit(3);
    }
}

#endif /* BENCH_COMMON_H */

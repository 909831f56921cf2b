/* SPDX-License-Identifier: MIT */
/*
 * Yield-to-yield switch: `threads` threads (default 2) call sched_yield in
 * a loop, so each yield hands the CPU to the next thread. Reports
 * nanoseconds per switch on one CPU: elapsed * cpus / total yields, where
 * `cpus` is how many CPUs (workers) the threads share, given by the runner
 * (default 1).
 *
 * Usage: yield_switch [seconds] [threads] [cpus]
 *
 * It measures a switch only when at least two threads share each CPU:
 * the runner pins NPTL to one CPU (taskset) for the 1-CPU case, runs
 * Capriccio with CAP_WORKERS=1 and Go with GOMAXPROCS=1, and uses two
 * threads per CPU otherwise. With `check` set (argv[4] = 1; meaningful on
 * one CPU only) each thread also counts the yields after which another
 * thread had run, and the report gives the fraction as "switched": a
 * sched_yield that returns without switching would show up there.
 *
 * Thread 0 keeps time from its first yield: it reads the clock every
 * CLOCK_EVERY yields and raises `stop` when the duration is up. There is
 * no start gate (threads spinning on a flag until all have started): it
 * would only measure the scheduler's fairness to not-yet-started threads
 * (a gate once hung on Capriccio, docs/benchmarks.md), and the few yields
 * before every thread runs are noise.
 *
 * The report also gives the spread of yields between threads ("share_min",
 * "share_max": each thread's share times the thread count, 1.0 when even):
 * threads that end up alone on a CPU yield without switching, which shows
 * up as a share far above 1.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "common.h"

enum { CLOCK_EVERY = 1024, MAX_THREADS = 64 };

struct worker {
    int id;
    uint64_t yields;
    uint64_t switched;
    char pad[64];
};

static struct worker workers[MAX_THREADS];
static atomic_int stop;
static _Atomic int last_runner = -1;
static int check;
static double secs;
static uint64_t t_start, t_stop;

static void *run(void *arg)
{
    struct worker *me = arg;
    uint64_t want = (uint64_t)(secs * 1e9);
    uint64_t n = 0, sw = 0;
    if (me->id == 0)
        t_start = bench_now_ns();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        sched_yield();
        n++;
        if (check && atomic_load_explicit(&last_runner, memory_order_relaxed) != me->id) {
            atomic_store_explicit(&last_runner, me->id, memory_order_relaxed);
            sw++;
        }
        if (me->id == 0 && n % CLOCK_EVERY == 0) {
            uint64_t now = bench_now_ns();
            if (now - t_start >= want) {
                t_stop = now;
                atomic_store(&stop, 1);
            }
        }
    }
    me->yields = n;
    me->switched = sw;
    return NULL;
}

int main(int argc, char **argv)
{
    secs = bench_arg_secs(argc, argv, 1, 0.5);
    int nthreads = (int)bench_arg_long(argc, argv, 2, 2);
    int cpus = (int)bench_arg_long(argc, argv, 3, 1);
    check = argc > 4 && atoi(argv[4]) != 0;
    if (nthreads < 2 || nthreads > MAX_THREADS) {
        fprintf(stderr, "threads must be 2..%d\n", MAX_THREADS);
        return 2;
    }
    pthread_t tids[MAX_THREADS];
    uint64_t c0 = bench_cpu_ns(); /* creation and joins count too: noise */
    for (int i = 0; i < nthreads; i++) {
        workers[i].id = i;
        bench_check(pthread_create(&tids[i], NULL, run, &workers[i]), "pthread_create");
    }
    uint64_t total = 0, switched = 0, lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < nthreads; i++) {
        bench_check(pthread_join(tids[i], NULL), "pthread_join");
        total += workers[i].yields;
        switched += workers[i].switched;
        lo = workers[i].yields < lo ? workers[i].yields : lo;
        hi = workers[i].yields > hi ? workers[i].yields : hi;
    }
    bench_cpu_used = bench_cpu_ns() - c0;
    double even = (double)total / nthreads;
    /* ns per switch on one CPU: the cpus run their switches in parallel. */
    uint64_t elapsed = (t_stop - t_start) * (uint64_t)cpus;
    char extra[160];
    int len = snprintf(extra, sizeof extra, "\"cpus\":%d,\"share_min\":%.3f,\"share_max\":%.3f",
                       cpus, lo / even, hi / even);
    if (check)
        snprintf(extra + len, sizeof extra - (size_t)len, ",\"switched\":%.4f",
                 total ? (double)switched / (double)total : 0.0);
    bench_report("yield", nthreads, total, elapsed, extra);
    return 0;
}

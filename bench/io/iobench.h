/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the I/O benchmark programs in bench/io/.
 *
 * The threaded programs (pipetest.c, diskread.c, httpd_threads.c) are
 * plain pthread programs: nothing here names the library. bench/io/run.py
 * builds each twice from the same source, once on NPTL and once with
 * -include capriccio/pthread.h linked to libcapriccio (BENCH_VIA says
 * which); the event-loop peers (pipetest_epoll.c, httpd_epoll.c) are
 * built on libc alone. So this file may use only libc.
 *
 * Output: one JSON object per run on stdout, which run.py reads. A program
 * that cannot run a configuration says why on stderr and exits with
 * BENCH_EXIT_CANNOT (a limit: descriptors, threads) or BENCH_EXIT_SKIP (a
 * missing kernel or file-system feature), so the driver can report where a
 * variant stops instead of counting it as a crash.
 */
#ifndef BENCH_IO_IOBENCH_H
#define BENCH_IO_IOBENCH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef BENCH_VIA
#define BENCH_VIA "nptl"
#endif

enum {
    BENCH_EXIT_CANNOT = 3, /* a limit of this machine: descriptors, threads */
    BENCH_EXIT_SKIP = 77,  /* a feature this kernel or file system lacks */
};

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* User + system CPU time of the whole process so far. */
static inline uint64_t bench_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

/* Sleeps secs seconds of wall time (nanosleep: on Capriccio only the
 * calling user thread waits). */
static inline void bench_sleep(double secs)
{
    struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline long bench_arg_long(const char *prog, const char *s, long min)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < min) {
        fprintf(stderr, "%s: bad number \"%s\" (a whole number >= %ld)\n", prog, s, min);
        exit(2);
    }
    return v;
}

static inline double bench_arg_secs(const char *prog, const char *s)
{
    double v = strtod(s, NULL);
    if (!(v > 0)) {
        fprintf(stderr, "%s: bad duration \"%s\" (seconds, > 0)\n", prog, s);
        exit(2);
    }
    return v;
}

/* Makes at least `need` descriptors available: the soft limit goes up to
 * the hard limit, and the hard limit itself goes up where the process may
 * raise it (CAP_SYS_RESOURCE). Exits with BENCH_EXIT_CANNOT, saying which
 * limit stops it, when that is not enough. Returns the limit in force. */
static inline long bench_nofile(const char *prog, long need)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((long)rl.rlim_cur >= need)
        return (long)rl.rlim_cur;
    struct rlimit want = { (rlim_t)need, rl.rlim_max > (rlim_t)need ? rl.rlim_max : (rlim_t)need };
    if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if ((long)rl.rlim_cur < need) {
            fprintf(stderr, "%s: needs %ld descriptors, RLIMIT_NOFILE hard limit is %ld\n",
                    prog, need, (long)rl.rlim_max);
            exit(BENCH_EXIT_CANNOT);
        }
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

/* Reports a failed pthread call (which returns an error number) as a limit
 * of this machine. */
static inline void bench_check_thread(int rc, const char *what, long index)
{
    if (rc != 0) {
        fprintf(stderr, "%s failed at thread %ld: %s\n", what, index, strerror(rc));
        exit(BENCH_EXIT_CANNOT);
    }
}

static inline void bench_die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, strerror(errno));
    exit(1);
}

/* A tiny per-thread generator (xorshift64*): no shared state, no locks. */
static inline uint64_t bench_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

/* A per-thread counter on its own cache line: written by its thread only,
 * summed racily by main, so counting costs no shared-line traffic. */
typedef struct bench_slot {
    _Alignas(64) volatile unsigned long n;
} bench_slot;

static inline unsigned long bench_sum(const bench_slot *s, long count)
{
    unsigned long total = 0;
    for (long i = 0; i < count; i++)
        total += s[i].n;
    return total;
}

#endif /* BENCH_IO_IOBENCH_H */

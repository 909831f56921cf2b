/* SPDX-License-Identifier: MIT */
/*
 * `make demo`: 100,000 user threads that sleep and wake in waves.
 *
 * main creates the threads (16 KiB stacks) inside a cap_once whose init is
 * the creation loop, so a thread another worker starts early parks in the
 * same cap_once until all exist and the start time t0 is set. Each thread
 * then sleeps until t0 + WAVE_MS, counts itself in wave 1, sleeps until
 * t0 + 2 x WAVE_MS, and so on. main polls the counters with cap_sleep_ns,
 * prints each wave as it completes, and joins everyone at the end.
 *
 * Memory per thread: the largest VmRSS sampled while every thread is alive
 * (once all have started, and after each wave but the last), minus VmRSS
 * before creating them, divided by the count: TCB, touched stack pages and
 * timer. Only the public API (include/capriccio.h) is used.
 */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    DEFAULT_THREADS = 100000,
    DEFAULT_WAVES = 5,
    MAX_WAVES = 100,
    WAVE_MS = 200,          /* time between two waves */
    STACK_KIB = 16,         /* enough for a thread that only sleeps */
};
#define MS ((uint64_t)1000000)

struct wave {
    atomic_long woke;       /* threads that woke in this wave */
    atomic_long early;      /* woke before the deadline: must stay 0 */
    atomic_ulong late_max;  /* latest wake-up after the deadline, ns */
};

static long nthreads = DEFAULT_THREADS;
static int nwaves = DEFAULT_WAVES;
static struct wave waves[MAX_WAVES];
static atomic_long started, finished;
static cap_thread_t *threads;
static cap_thread_attr_t attr;
static uint64_t begin, t0;           /* creation started; every thread exists */
static cap_once_t gate = CAP_ONCE_INIT; /* passed once t0 is set */

static void atomic_max(atomic_ulong *x, unsigned long v)
{
    unsigned long cur = atomic_load_explicit(x, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak(x, &cur, v))
        ;
}

static void create_all(void);

static void *sleeper(void *arg)
{
    atomic_fetch_add(&started, 1);
    cap_once(&gate, create_all); /* main runs it; here it only parks */
    for (int w = 0; w < nwaves; w++) {
        uint64_t deadline = t0 + (uint64_t)(w + 1) * WAVE_MS * MS;
        uint64_t now = cap_now_ns();
        if (now < deadline)
            cap_sleep_ns(deadline - now);
        now = cap_now_ns();
        if (now < deadline)
            atomic_fetch_add(&waves[w].early, 1);
        else
            atomic_max(&waves[w].late_max, now - deadline);
        atomic_fetch_add(&waves[w].woke, 1);
    }
    atomic_fetch_add(&finished, 1);
    return arg;
}

/* VmRSS of this process in KiB, or -1. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    return kib;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--threads N] [--waves 1..%d]\n", argv0, MAX_WAVES);
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) { /* flag, value */
        char *end;
        if (i + 1 >= argc)
            usage(argv[0]);
        long v = strtol(argv[i + 1], &end, 10);
        if (*end != '\0' || v < 1)
            usage(argv[0]);
        if (strcmp(argv[i], "--threads") == 0)
            nthreads = v;
        else if (strcmp(argv[i], "--waves") == 0 && v <= MAX_WAVES)
            nwaves = (int)v;
        else
            usage(argv[0]);
    }
}

/* The gate's init function, run by main: creates every thread. */
static void create_all(void)
{
    begin = cap_now_ns();
    for (long i = 0; i < nthreads; i++) {
        int rc = cap_thread_create(&threads[i], &attr, sleeper, NULL);
        if (rc != 0) { /* EAGAIN: out of memory or mappings; go on with fewer */
            fprintf(stderr, "demo: thread %ld: %s; continuing with %ld threads\n",
                    i + 1, strerror(rc), i);
            nthreads = i;
            break;
        }
    }
    t0 = cap_now_ns();
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    threads = malloc((size_t)nthreads * sizeof *threads);
    cap_thread_attr_init(&attr);
    if (threads == NULL || cap_thread_attr_setstacksize(&attr, STACK_KIB * 1024) != 0) {
        fprintf(stderr, "demo: cannot set up %ld threads\n", nthreads);
        return 1;
    }
    int nworkers = cap_worker_count();
    const char *plural = nworkers == 1 ? "" : "s";
    printf("Capriccio demo: %ld threads with %d KiB stacks on %d worker%s, %d waves %d ms "
           "apart\n", nthreads, STACK_KIB, nworkers, plural, nwaves, WAVE_MS);

    long base_kib = rss_kib();
    cap_once(&gate, create_all);
    if (nthreads == 0)
        return 1;
    while (atomic_load(&started) < nthreads)
        cap_sleep_ns(MS);
    long peak_kib = rss_kib();
    printf("created %ld threads in %.0f ms; the waves count from then (t0)\n", nthreads,
           (double)(t0 - begin) / MS);

    for (int w = 0; w < nwaves; w++) {
        while (atomic_load(&waves[w].woke) < nthreads)
            cap_sleep_ns(MS);
        long kib = w + 1 < nwaves ? rss_kib() : 0; /* the last wave's threads exit */
        peak_kib = kib > peak_kib ? kib : peak_kib;
        printf("wave %d/%d (t0 + %d ms): %ld threads woke, the last %.1f ms after the "
               "deadline, %ld early\n", w + 1, nwaves, (w + 1) * WAVE_MS,
               atomic_load(&waves[w].woke), (double)atomic_load(&waves[w].late_max) / MS,
               atomic_load(&waves[w].early));
    }
    for (long i = 0; i < nthreads; i++)
        cap_thread_join(threads[i], NULL);
    uint64_t end = cap_now_ns();

    if (base_kib < 0 || peak_kib < 0)
        printf("resident memory: unknown (no VmRSS in /proc/self/status)\n");
    else
        printf("resident memory: %.2f KiB per thread (VmRSS %ld KiB with all %ld alive, "
               "%ld KiB before creating them)\n",
               (double)(peak_kib - base_kib) / (double)nthreads, peak_kib, nthreads, base_kib);
    printf("elapsed %.2f s on %d worker%s; %ld threads joined\n",
           (double)(end - begin) / 1e9, nworkers, plural, atomic_load(&finished));
    free(threads);
    return 0;
}

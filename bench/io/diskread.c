/* SPDX-License-Identifier: MIT */
/*
 * Disk reads, the Capriccio paper's Figures 3 and 4: T threads, each
 * reading 4 KiB blocks at random block-aligned offsets with plain
 * blocking pread(), for a fixed duration; reports reads per second.
 *
 * Usage:
 *   diskread direct <big file> <threads> [seconds] [warm-up] [seed]
 *       every read from <big file> opened with O_DIRECT (Figure 3: the
 *       disk's own queueing and head scheduling at concurrency T);
 *   diskread mix <big file> <small file> <threads> <miss %> [seconds] [warm-up] [seed]
 *       <miss %> of the reads from <big file> with O_DIRECT (misses), the
 *       rest from <small file> opened normally and read once beforehand,
 *       so they hit the page cache (Figure 4, the paper's method).
 *   defaults: 1 second, 0.2 s warm-up, seed 0.
 *
 * Offsets: each thread draws its blocks from a generator seeded by its
 * index and <seed>. Runs with the same seed read the same blocks in the
 * same order, so a run's blocks must not be the previous run's: the disk
 * below may keep what it just read (a virtual disk's host page cache does,
 * and O_DIRECT bypasses only the guest's), and a run repeating them would
 * be served from there. run.py gives every run a seed of its own.
 *
 * The miss pattern is exact, not random: read k of a thread is a miss when
 * floor((k+1)·p/100) > floor(k·p/100), and threads start at different
 * phases, so every run at a given rate does the same work.
 *
 * The same source runs on NPTL and, through -include capriccio/pthread.h,
 * on Capriccio, where pread() on a regular file goes to the disk layer
 * (src/io/disk.c: a page-cache attempt with RWF_NOWAIT, then CAP_DISKIO).
 * Exits 77 (skip) when the file system refuses O_DIRECT.
 *
 * Timing: the readers time themselves. Main publishes the window (after
 * creating every thread: the warm-up, then the duration) and joins; each
 * reader counts the reads it starts inside the window and returns once
 * the window has closed. Nothing depends on main being scheduled while
 * the readers run: on a user-level scheduler a read that completes
 * without parking (a page-cache hit) is no scheduling point, so a sleeping
 * main could wait for as long as the readers keep hitting. How evenly the
 * threads got to read is reported as well: the fewest and the most reads
 * of one thread relative to the mean, and how many threads made none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_DIRECT */
#endif
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iobench.h"

enum { BLOCK = 4096, STACK_BYTES = 64 * 1024 };

static int big_fd = -1, small_fd = -1;
static long big_blocks, small_blocks;
static long miss_pct = 100; /* direct mode: every read is a miss */
static uint64_t run_seed;    /* offsets of this run (see above) */
static bench_slot *reads;     /* reads started inside the window */
static bench_slot *all_reads; /* every read, for the CPU time per read */

/* The measurement window, published by main once every thread exists; 0
 * until then. */
static _Atomic uint64_t win_begin, win_end;

static void *reader(void *arg)
{
    long i = (long)arg;
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ 0xbf58476d1ce4e5b9ull * run_seed;
    if (seed == 0) /* xorshift's one fixed point */
        seed = 1;
    void *buf;
    if (posix_memalign(&buf, BLOCK, BLOCK) != 0) /* O_DIRECT wants alignment */
        bench_die("posix_memalign");
    unsigned long counted = 0, made = 0;
    for (unsigned long k = (unsigned long)i * 7;; k++) {
        uint64_t now = bench_now_ns(), end = win_end;
        if (end != 0 && now >= end)
            break;
        bool miss = ((k + 1) * (unsigned long)miss_pct) / 100 > (k * (unsigned long)miss_pct) / 100;
        int fd = miss ? big_fd : small_fd;
        long blocks = miss ? big_blocks : small_blocks;
        off_t off = (off_t)(bench_rand(&seed) % (uint64_t)blocks) * BLOCK;
        ssize_t r = pread(fd, buf, BLOCK, off);
        if (r != BLOCK) {
            if (r < 0 && errno == EINTR)
                continue;
            bench_die("pread");
        }
        made++;
        if (end != 0 && now >= win_begin)
            counted++;
    }
    reads[i].n = counted;
    all_reads[i].n = made;
    free(buf);
    return NULL;
}

static long blocks_of(int fd, const char *name)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        bench_die(name);
    if (st.st_size < BLOCK) {
        fprintf(stderr, "%s: smaller than one block\n", name);
        exit(2);
    }
    return (long)(st.st_size / BLOCK);
}

static void open_big(const char *path)
{
    big_fd = open(path, O_RDONLY | O_DIRECT);
    if (big_fd < 0 && errno == EINVAL) {
        fprintf(stderr, "%s: O_DIRECT not supported by this file system\n", path);
        exit(BENCH_EXIT_SKIP);
    }
    if (big_fd < 0)
        bench_die(path);
    big_blocks = blocks_of(big_fd, path);
    void *buf;
    if (posix_memalign(&buf, BLOCK, BLOCK) != 0)
        bench_die("posix_memalign");
    if (pread(big_fd, buf, BLOCK, 0) != BLOCK) { /* some refuse only at read time */
        fprintf(stderr, "%s: O_DIRECT read failed: %s\n", path, strerror(errno));
        exit(errno == EINVAL ? BENCH_EXIT_SKIP : 1);
    }
    free(buf);
}

static void open_small(const char *path)
{
    small_fd = open(path, O_RDONLY);
    if (small_fd < 0)
        bench_die(path);
    small_blocks = blocks_of(small_fd, path);
    char buf[BLOCK];
    for (long b = 0; b < small_blocks; b++) /* into the page cache */
        if (pread(small_fd, buf, BLOCK, (off_t)b * BLOCK) != BLOCK)
            bench_die("pread (small file)");
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s direct <big file> <threads> [seconds] [warm-up] [seed]\n"
            "       %s mix <big file> <small file> <threads> <miss %%> [seconds] [warm-up] "
            "[seed]\n",
            prog, prog);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage(argv[0]);
    bool mix = strcmp(argv[1], "mix") == 0;
    if (!mix && strcmp(argv[1], "direct") != 0)
        usage(argv[0]);
    int a = 2;
    if (argc < (mix ? 6 : 4) || argc > (mix ? 9 : 7))
        usage(argv[0]);
    open_big(argv[a++]);
    if (mix)
        open_small(argv[a++]);
    long nthreads = bench_arg_long(argv[0], argv[a++], 1);
    if (mix) {
        miss_pct = bench_arg_long(argv[0], argv[a++], 0);
        if (miss_pct > 100)
            usage(argv[0]);
    }
    double secs = argc > a ? bench_arg_secs(argv[0], argv[a]) : 1.0;
    double warm = argc > a + 1 ? bench_arg_secs(argv[0], argv[a + 1]) : 0.2;
    run_seed = argc > a + 2 ? (uint64_t)bench_arg_long(argv[0], argv[a + 2], 0) : 0;

    reads = aligned_alloc(64, (size_t)nthreads * sizeof *reads);
    all_reads = aligned_alloc(64, (size_t)nthreads * sizeof *all_reads);
    if (reads == NULL || all_reads == NULL)
        bench_die("malloc");
    memset(reads, 0, (size_t)nthreads * sizeof *reads);
    memset(all_reads, 0, (size_t)nthreads * sizeof *all_reads);
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    if (tids == NULL)
        bench_die("malloc");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    for (long i = 0; i < nthreads; i++)
        bench_check_thread(pthread_create(&tids[i], &attr, reader, (void *)i), "pthread_create",
                           i);
    uint64_t begin = bench_now_ns() + (uint64_t)(warm * 1e9);
    win_begin = begin;
    win_end = begin + (uint64_t)(secs * 1e9);
    for (long i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    /* CPU time over the whole run, set against every read of the run: no
     * one samples the clock at the window's edges (see above). */
    uint64_t cpu = bench_cpu_ns();
    unsigned long made = bench_sum(all_reads, nthreads);

    unsigned long total = bench_sum(reads, nthreads), lo = ULONG_MAX, hi = 0;
    long idle = 0;
    for (long i = 0; i < nthreads; i++) {
        unsigned long n = reads[i].n;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
        idle += n == 0;
    }
    double mean = (double)total / (double)nthreads;
    printf("{\"bench\":\"disk-%s\",\"via\":\"%s\",\"threads\":%ld,\"miss_pct\":%ld,"
           "\"reads\":%lu,\"elapsed_ns\":%llu,\"cpu_ns\":%llu,\"per_sec\":%.1f,"
           "\"cpu_ns_per_read\":%.1f,\"min_share\":%.3f,\"max_share\":%.3f,"
           "\"idle_threads\":%ld}\n",
           mix ? "mix" : "direct", BENCH_VIA, nthreads, miss_pct, total,
           (unsigned long long)(secs * 1e9), (unsigned long long)cpu,
           (double)total / secs, made ? (double)cpu / (double)made : 0.0, mean > 0 ? (double)lo / mean : 0.0,
           mean > 0 ? (double)hi / mean : 0.0, idle);
    fflush(stdout);
    return 0;
}

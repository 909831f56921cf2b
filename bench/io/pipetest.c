/* SPDX-License-Identifier: MIT */
/*
 * Pipetest, the Capriccio paper's Figure 2, threaded version: N pipes in a
 * ring and one thread per pipe, blocked in read() on it. A thread that
 * reads a token (12 bytes) writes it into the next pipe of the ring. There
 * are N/4 tokens below 128 pipes (at least one), else 128, spread evenly
 * over the ring, so most pipes are idle: the slow-client-links load of an
 * Internet server. Reports tokens passed per second over a fixed duration.
 *
 * Usage: pipetest <pipes> [seconds] [warm-up seconds]
 *   defaults:              1          0.2
 *
 * The same source runs on NPTL and, through -include capriccio/pthread.h,
 * on Capriccio, where the plain blocking read() and write() park only the
 * user thread (src/intercept). pipetest_epoll.c is the same token logic
 * as a single-threaded epoll loop.
 *
 * Timing: every pipe and thread is made first and the tokens injected;
 * after the warm-up the main thread sums the per-thread hop counters,
 * sleeps the duration and sums again. Setup and teardown are not counted;
 * after the second sum the program reports and _exit()s (the relays never
 * end). Each thread has a 64 KiB stack on both implementations.
 */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "iobench.h"

enum { TOKEN = 12, STACK_BYTES = 64 * 1024 };

static long npipes;
static int (*pipes)[2];  /* [i][0]: read end, [i][1]: write end */
static bench_slot *hops; /* hops[i]: tokens thread i passed on */

static void transfer(int fd, char *buf, int write_side)
{
    size_t done = 0;
    while (done < TOKEN) {
        ssize_t r = write_side ? write(fd, buf + done, TOKEN - done)
                               : read(fd, buf + done, TOKEN - done);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            bench_die(write_side ? "write" : "read");
        }
        done += (size_t)r;
    }
}

static void *relay(void *arg)
{
    long i = (long)arg;
    int in = pipes[i][0], out = pipes[(i + 1) % npipes][1];
    char token[TOKEN];
    for (;;) {
        transfer(in, token, 0);
        transfer(out, token, 1);
        hops[i].n++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s <pipes> [seconds] [warm-up seconds]\n", argv[0]);
        return 2;
    }
    npipes = bench_arg_long(argv[0], argv[1], 2);
    double secs = argc > 2 ? bench_arg_secs(argv[0], argv[2]) : 1.0;
    double warm = argc > 3 ? bench_arg_secs(argv[0], argv[3]) : 0.2;
    long tokens = npipes < 128 ? npipes / 4 : 128;
    if (tokens < 1)
        tokens = 1;
    bench_nofile(argv[0], 2 * npipes + 32);

    uint64_t t_setup = bench_now_ns();
    pipes = calloc((size_t)npipes, sizeof *pipes);
    hops = aligned_alloc(64, (size_t)npipes * sizeof *hops);
    if (pipes == NULL || hops == NULL)
        bench_die("malloc");
    memset(hops, 0, (size_t)npipes * sizeof *hops);
    for (long i = 0; i < npipes; i++) {
        if (pipe(pipes[i]) != 0) {
            if (errno == EMFILE || errno == ENFILE) {
                fprintf(stderr, "pipe failed at pipe %ld: %s\n", i, strerror(errno));
                return BENCH_EXIT_CANNOT;
            }
            bench_die("pipe");
        }
    }

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < npipes; i++) {
        pthread_t t;
        bench_check_thread(pthread_create(&t, &attr, relay, (void *)i), "pthread_create", i);
    }
    char token[TOKEN] = "token-00000";
    for (long k = 0; k < tokens; k++)
        transfer(pipes[k * npipes / tokens][1], token, 1);
    uint64_t setup_ns = bench_now_ns() - t_setup;

    bench_sleep(warm);
    unsigned long h0 = bench_sum(hops, npipes);
    uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
    bench_sleep(secs);
    unsigned long h1 = bench_sum(hops, npipes);
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();

    printf("{\"bench\":\"pipetest\",\"via\":\"%s\",\"pipes\":%ld,\"tokens\":%ld,"
           "\"hops\":%lu,\"elapsed_ns\":%llu,\"cpu_ns\":%llu,\"setup_ns\":%llu,"
           "\"per_sec\":%.1f}\n",
           BENCH_VIA, npipes, tokens, h1 - h0, (unsigned long long)(t1 - t0),
           (unsigned long long)(c1 - c0), (unsigned long long)setup_ns,
           (double)(h1 - h0) * 1e9 / (double)(t1 - t0));
    fflush(stdout);
    _exit(0);
}

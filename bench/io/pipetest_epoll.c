/* SPDX-License-Identifier: MIT */
/*
 * Pipetest as a single-threaded event loop: the peer of pipetest.c, with
 * the same ring of N pipes, the same token count and placement, and the
 * same token logic (read one 12-byte token from pipe i, write it into pipe
 * i+1), driven by one non-blocking epoll loop instead of one thread per
 * pipe. This is the best a hand-written event server does on Linux, the
 * bar the paper set for Capriccio (Figure 2: "within 10% of epoll").
 *
 * Usage: pipetest_epoll <pipes> [seconds] [warm-up seconds] [lt|et]
 *   defaults:                    1          0.2             lt
 *
 * lt (the peer the targets use): level-triggered, one read per ready pipe
 * per epoll_wait; a pipe holding several tokens stays ready and is served
 * again on the next round, and no read is spent on discovering EAGAIN, so
 * per token this loop makes exactly one read and one write, the least any
 * implementation of the logic can make.
 * et: edge-triggered, reading each ready pipe until EAGAIN, as an event
 * loop must when it is told about edges only. That final read is the one
 * a thread library cannot avoid either (a thread reads until it would
 * block, then parks), so this variant shows the cost of that read alone.
 *
 * Timing: the loop runs the warm-up, then counts hops for the duration;
 * the clock is read once per epoll_wait batch. Output as pipetest.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "iobench.h"

enum { TOKEN = 12, MAX_EVENTS = 1024 };

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: %s <pipes> [seconds] [warm-up seconds] [lt|et]\n", argv[0]);
        return 2;
    }
    long npipes = bench_arg_long(argv[0], argv[1], 2);
    double secs = argc > 2 ? bench_arg_secs(argv[0], argv[2]) : 1.0;
    double warm = argc > 3 ? bench_arg_secs(argv[0], argv[3]) : 0.2;
    bool et = argc > 4 && strcmp(argv[4], "et") == 0;
    if (argc > 4 && !et && strcmp(argv[4], "lt") != 0) {
        fprintf(stderr, "%s: mode is lt or et, not \"%s\"\n", argv[0], argv[4]);
        return 2;
    }
    long tokens = npipes < 128 ? npipes / 4 : 128;
    if (tokens < 1)
        tokens = 1;
    bench_nofile(argv[0], 2 * npipes + 32);

    uint64_t t_setup = bench_now_ns();
    int (*pipes)[2] = calloc((size_t)npipes, sizeof *pipes);
    if (pipes == NULL)
        bench_die("malloc");
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        bench_die("epoll_create1");
    for (long i = 0; i < npipes; i++) {
        if (pipe2(pipes[i], O_NONBLOCK) != 0) {
            if (errno == EMFILE || errno == ENFILE) {
                fprintf(stderr, "pipe failed at pipe %ld: %s\n", i, strerror(errno));
                return BENCH_EXIT_CANNOT;
            }
            bench_die("pipe2");
        }
        struct epoll_event ev = { .events = EPOLLIN | (et ? EPOLLET : 0u),
                                   .data.u64 = (uint64_t)i };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, pipes[i][0], &ev) != 0)
            bench_die("epoll_ctl");
    }
    char token[TOKEN] = "token-00000";
    for (long k = 0; k < tokens; k++)
        if (write(pipes[k * npipes / tokens][1], token, TOKEN) != TOKEN)
            bench_die("write");
    uint64_t setup_ns = bench_now_ns() - t_setup;

    static struct epoll_event evs[MAX_EVENTS];
    unsigned long count = 0, h0 = 0;
    uint64_t start = bench_now_ns(), t0 = 0, c0 = 0, now;
    uint64_t warm_end = start + (uint64_t)(warm * 1e9);
    uint64_t end = UINT64_MAX;
    for (;;) {
        int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            bench_die("epoll_wait");
        }
        for (int e = 0; e < n; e++) {
            long i = (long)evs[e].data.u64;
            do {
                ssize_t r = read(pipes[i][0], token, TOKEN);
                if (r < 0 && errno == EAGAIN)
                    break;
                if (r != TOKEN) /* pipe writes of 12 bytes are atomic */
                    bench_die("read");
                if (write(pipes[(i + 1) % npipes][1], token, TOKEN) != TOKEN)
                    bench_die("write");
                count++;
            } while (et);
        }
        now = bench_now_ns();
        if (t0 == 0 && now >= warm_end) {
            t0 = now;
            c0 = bench_cpu_ns();
            h0 = count;
            end = t0 + (uint64_t)(secs * 1e9);
        } else if (now >= end) {
            break;
        }
    }
    uint64_t c1 = bench_cpu_ns();
    printf("{\"bench\":\"pipetest\",\"via\":\"epoll-%s\",\"pipes\":%ld,\"tokens\":%ld,"
           "\"hops\":%lu,\"elapsed_ns\":%llu,\"cpu_ns\":%llu,\"setup_ns\":%llu,"
           "\"per_sec\":%.1f}\n",
           et ? "et" : "lt", npipes, tokens, count - h0, (unsigned long long)(now - t0),
           (unsigned long long)(c1 - c0), (unsigned long long)setup_ns,
           (double)(count - h0) * 1e9 / (double)(now - t0));
    fflush(stdout);
    return 0;
}

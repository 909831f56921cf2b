/* SPDX-License-Identifier: MIT */
/*
 * Cost of delivering a caught signal beside many threads parked in read():
 * the timer-signal case (setitimer SIGALRM/SIGPROF every millisecond in a
 * server with thousands of blocked threads).
 *
 *   sigdeliver_<via> [threads [deliveries]]      defaults 1000, 2000
 *
 * `threads` threads park in read() on pipes (four readers per pipe, so
 * 10,000 threads fit in the usual descriptor limit) and stay parked. The
 * handler is installed with SA_RESTART, as timer handlers are, so no read
 * is interrupted: the kernel restarts them under NPTL, and Capriccio's
 * dispatch (src/io/sigintr.h) must find that nothing may take the
 * delivery. The main thread then sends `deliveries` signals with kill(),
 * one every 50 us (sleeping in between, so that consecutive signals do
 * not merge while pending and the runtime's dispatch runs between them),
 * and reports the process's CPU time per delivery (getrusage, all threads:
 * the handler, the dispatch and the sender's own sleeps and kills, the
 * last two the same for every build). Not part of bench/runner.py's suite;
 * run it directly, e.g. for the Capriccio and NPTL builds side by side.
 *
 * Output: one JSON object, as the other micro-benchmarks.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

enum { PER_PIPE = 4, GAP_NS = 50000 };

static atomic_long handled;

static void on_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
    int fd = (int)(long)arg;
    char c;
    for (;;) {
        ssize_t r = read(fd, &c, 1);
        if (r == 1)
            return NULL;
        if (r < 0 && errno != EINTR)
            bench_check(errno, "read");
    }
}

static void sleep_ns(long ns)
{
    struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int main(int argc, char **argv)
{
    long n = bench_arg_long(argc, argv, 1, 1000);
    long deliveries = bench_arg_long(argc, argv, 2, 2000);
    long npipes = (n + PER_PIPE - 1) / PER_PIPE;

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int (*fds)[2] = malloc((size_t)npipes * sizeof *fds);
    pthread_t *t = malloc((size_t)n * sizeof *t);
    if (fds == NULL || t == NULL)
        bench_check(ENOMEM, "malloc");
    for (long i = 0; i < npipes; i++)
        bench_check(pipe(fds[i]) == 0 ? 0 : errno, "pipe");

    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    bench_check(sigaction(SIGUSR1, &sa, NULL) == 0 ? 0 : errno, "sigaction");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (long i = 0; i < n; i++)
        bench_check(pthread_create(&t[i], &attr, reader, (void *)(long)fds[i / PER_PIPE][0]),
                    "pthread_create");
    sleep_ns(200000000); /* every reader parked */

    uint64_t cpu0 = bench_cpu_ns(), t0 = bench_now_ns();
    for (long k = 0; k < deliveries; k++) {
        kill(getpid(), SIGUSR1);
        sleep_ns(GAP_NS);
    }
    while (atomic_load(&handled) < deliveries)
        sleep_ns(GAP_NS);
    sleep_ns(10000000); /* the last dispatches */
    uint64_t elapsed = bench_now_ns() - t0;
    bench_cpu_used = bench_cpu_ns() - cpu0;

    for (long i = 0; i < n; i++)
        bench_check(write(fds[i / PER_PIPE][1], "x", 1) == 1 ? 0 : errno, "write");
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("{\"bench\":\"sigdeliver\",\"via\":\"%s\",\"threads\":%ld,\"ops\":%ld,"
           "\"elapsed_ns\":%llu,\"cpu_ns\":%llu,\"cpu_ns_per_op\":%.1f}\n",
           BENCH_VIA, n, deliveries, (unsigned long long)elapsed,
           (unsigned long long)bench_cpu_used, (double)bench_cpu_used / (double)deliveries);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* The paper's bigstack (Capriccio, SOSP'03, Section 3.5): THREADS threads
 * each call bigstack() CALLS times; bigstack touches every page of a 1 MiB
 * buffer on its stack; threads yield between calls. With a stack per
 * thread every thread needs its own 1 MiB; on linked stacks the call links
 * a chunk only for its duration, so the threads of a worker share one.
 *
 * Usage: bigstack THREADS [CALLS=10]
 * Prints one JSON line: wall, user and system seconds, peak RSS. */
#include <pthread.h>
#include <sched.h>

#include "bench_util.h"

enum { BIG = 1 << 20 };

static int calls = 10;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int started;

static __attribute__((noinline)) long bigstack(long x)
{
    volatile char buf[BIG];
    for (size_t i = 0; i < sizeof buf; i += 4096)
        buf[i] = (char)(x + (long)i);
    return buf[4096];
}

static void *worker(void *arg)
{
    /* All threads exist before any runs, as in the paper's setup. */
    pthread_mutex_lock(&start_lock);
    while (!started)
        pthread_cond_wait(&start_cond, &start_lock);
    pthread_mutex_unlock(&start_lock);
    long s = 0;
    for (int i = 0; i < calls; i++) {
        s += bigstack((long)arg + i);
        sched_yield();
    }
    return (void *)s;
}

int main(int argc, char **argv)
{
    long threads = argc > 1 ? atol(argv[1]) : 800;
    if (argc > 2)
        calls = atoi(argv[2]);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* A stack per thread must hold the 1 MiB frame (NPTL's default is 8 MiB
     * already; Capriccio's default stacks are 256 KiB). Linked stacks
     * ignore it. */
    pthread_attr_setstacksize(&attr, 2 << 20);
    double t0 = now_s(), u0, s0, u1, s1;
    cpu_times(&u0, &s0);
    long created = 0;
    for (; created < threads; created++)
        if (pthread_create(&t[created], &attr, worker, (void *)created) != 0)
            break;
    pthread_mutex_lock(&start_lock);
    started = 1;
    pthread_cond_broadcast(&start_cond);
    pthread_mutex_unlock(&start_lock);
    for (long i = 0; i < created; i++)
        pthread_join(t[i], NULL);
    double t1 = now_s();
    cpu_times(&u1, &s1);
    printf("{\"bench\":\"bigstack\",\"variant\":\"%s\",\"threads\":%ld,\"created\":%ld,"
           "\"calls\":%d,\"wall_s\":%.3f,\"user_s\":%.3f,\"sys_s\":%.3f,\"peak_rss_kib\":%ld}\n",
           BENCH_VARIANT, threads, created, calls, t1 - t0, u1 - u0, s1 - s0,
           status_kib("VmHWM:"));
    return created == threads ? 0 : 1;
}

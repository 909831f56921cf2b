/* SPDX-License-Identifier: MIT */
/* Memory per idle thread: N threads are created and all wait on a
 * condition variable; the RSS (and page-table) growth divided by N is the
 * cost of an idle thread: its stack as far as it was touched plus the
 * control block. Then all are released and joined.
 *
 * Usage: idle_memory N
 * Prints one JSON line (created < N when the system refused more). */
#include <pthread.h>

#include "bench_util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_waiting = PTHREAD_COND_INITIALIZER, go = PTHREAD_COND_INITIALIZER;
static long waiting;
static int released;

static void *idle(void *arg)
{
    pthread_mutex_lock(&lock);
    waiting++;
    pthread_cond_signal(&all_waiting);
    while (!released)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    return arg;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    memset(t, 0, (size_t)n * sizeof *t);
    long rss0 = status_kib("VmRSS:"), pte0 = status_kib("VmPTE:");
    double t0 = now_s();
    long created = 0;
    for (; created < n; created++)
        if (pthread_create(&t[created], NULL, idle, NULL) != 0)
            break;
    pthread_mutex_lock(&lock);
    while (waiting < created)
        pthread_cond_wait(&all_waiting, &lock);
    pthread_mutex_unlock(&lock);
    double t1 = now_s();
    long rss1 = status_kib("VmRSS:"), pte1 = status_kib("VmPTE:");
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < created; i++)
        pthread_join(t[i], NULL);
    double per = created > 0 ? (double)(rss1 - rss0) * 1024.0 / (double)created : 0;
    double pte = created > 0 ? (double)(pte1 - pte0) * 1024.0 / (double)created : 0;
    printf("{\"bench\":\"idle_memory\",\"variant\":\"%s\",\"threads\":%ld,\"created\":%ld,"
           "\"rss_bytes_per_thread\":%.0f,\"pagetable_bytes_per_thread\":%.0f,"
           "\"create_s\":%.3f}\n",
           BENCH_VARIANT, n, created, per, pte, t1 - t0);
    return 0;
}

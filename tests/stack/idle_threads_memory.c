/* SPDX-License-Identifier: MIT */
/* Description: N threads (CAPTEST_THREADS, default 100,000; the long test
 * runs 1,000,000) are created and all park; the resident memory they add,
 * stack plus control block, is at most 4.5 KiB per thread (or
 * CAPTEST_MAX_BYTES: tests/stacklinked runs this program on linked stacks,
 * default settings, with 2.5 KiB), with no system setting changed. Then all are
 * released and joined. */
#include <capriccio.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cap_mutex_t lock = CAP_MUTEX_INITIALIZER;
static cap_cond_t all_parked = CAP_COND_INITIALIZER, go = CAP_COND_INITIALIZER;
static long parked;
static int released;

static long status_kib(const char *field)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, strlen(field)) == 0)
            v = atol(line + strlen(field) + 1);
    fclose(f);
    return v;
}

static void *idle(void *arg)
{
    cap_mutex_lock(&lock);
    parked++;
    cap_cond_signal(&all_parked);
    while (!released)
        cap_cond_wait(&go, &lock);
    cap_mutex_unlock(&lock);
    return arg;
}

int main(void)
{
    const char *s = getenv("CAPTEST_THREADS");
    long n = s != NULL ? atol(s) : 100000;
    const char *m = getenv("CAPTEST_MAX_BYTES");
    long max_bytes = m != NULL ? atol(m) : 4608;
    CHECK_GT(n, 0);
    cap_thread_t *ids = malloc((size_t)n * sizeof *ids);
    CHECK(ids != NULL);
    memset(ids, 0, (size_t)n * sizeof *ids); /* resident before the baseline */

    long rss0 = status_kib("VmRSS:"), pte0 = status_kib("VmPTE:");
    uint64_t t0 = cap_now_ns();
    for (long i = 0; i < n; i++)
        CHECK_EQ(cap_thread_create(&ids[i], NULL, idle, NULL), 0);
    cap_mutex_lock(&lock);
    while (parked < n)
        cap_cond_wait(&all_parked, &lock);
    cap_mutex_unlock(&lock);
    uint64_t t1 = cap_now_ns();
    long rss1 = status_kib("VmRSS:"), pte1 = status_kib("VmPTE:");

    double per = (double)(rss1 - rss0) * 1024.0 / (double)n;
    fprintf(stderr,
            "%ld idle threads: %.0f bytes RSS per thread (%.2f KiB), page tables %.0f bytes "
            "per thread; created and parked in %.2f s\n",
            n, per, per / 1024, (double)(pte1 - pte0) * 1024.0 / (double)n,
            (double)(t1 - t0) / 1e9);
#if defined(__SANITIZE_ADDRESS__)
    bool asan = true; /* its shadow memory and fake stacks count in RSS */
    (void)max_bytes;
#else
    bool asan = false;
    CHECK_LE((long)per, max_bytes);
#endif

    cap_mutex_lock(&lock);
    released = 1;
    cap_cond_broadcast(&go);
    cap_mutex_unlock(&lock);
    for (long i = 0; i < n; i++)
        CHECK_EQ(cap_thread_join(ids[i], NULL), 0);
    free(ids);
    if (asan)
        SKIP("threads ran, but RSS is not comparable under AddressSanitizer");
    return 0;
}

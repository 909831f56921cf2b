/* SPDX-License-Identifier: MIT */
/* Shared by the bench/stack programs: timing, memory, one JSON result line.
 * The programs are plain pthread code; bench/stack/CMakeLists.txt builds
 * each as NPTL, Capriccio (default stacks, through <capriccio/pthread.h>)
 * and Capriccio on linked stacks (-fsplit-stack, lld). */
#ifndef BENCH_STACK_UTIL_H
#define BENCH_STACK_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef BENCH_VARIANT
#define BENCH_VARIANT "nptl"
#endif

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:", "VmPTE:"). */
static inline long status_kib(const char *field)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, strlen(field)) == 0)
            v = atol(line + strlen(field) + 1);
    fclose(f);
    return v;
}

static inline void cpu_times(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

#endif

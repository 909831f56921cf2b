/* SPDX-License-Identifier: MIT */
/*
 * stdio through a pipe, the cost per call: the same source built on plain
 * glibc and linked with Capriccio (whose stdio wrappers park instead of
 * blocking the worker: src/intercept/stdout.c, scanf.c). bench/stdio/run.py
 * builds both and runs them one after another.
 *
 * Usage: stdio_bench <mode> <calls>
 *   printf, fputs, putc: that many calls on stdout (a pipe to a reader);
 *   fwrite: that many 64 KiB blocks on stdout;
 *   scanf: reads numbers from stdin until EOF (calls: ignored);
 *   fwprintf, fputws, putwc: the same on stdout made a wide stream, in the
 *   C.UTF-8 locale (src/intercept/stdio_wide.c).
 * Prints one JSON line on stderr: {"mode": ..., "calls": ..., "ns": ...}
 * (nanoseconds per call, the loop only).
 *
 * It first starts and joins a kernel thread: glibc's stdio skips its
 * stream locks until a process has a second thread, and the programs
 * Capriccio runs are threaded (its own runtime counts), so both builds
 * are measured as threaded programs.
 */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s printf|fputs|putc|fwrite|scanf|fwprintf|fputws|putwc <calls>\n",
                argv[0]);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
        return 1;
    }
    const char *mode = argv[1];
    long calls = atol(argv[2]);
    static char block[65536];
    if (strcmp(mode, "fwprintf") == 0 || strcmp(mode, "fputws") == 0 || strcmp(mode, "putwc") == 0) {
        if (setlocale(LC_ALL, "C.UTF-8") == NULL || fwide(stdout, 1) <= 0) {
            fprintf(stderr, "%s: no C.UTF-8 locale or wide stdout\n", argv[0]);
            return 1;
        }
    }
    double t0 = now();
    if (strcmp(mode, "printf") == 0) {
        for (long i = 0; i < calls; i++)
            printf("line %ld of the run: %s\n", i, "text");
    } else if (strcmp(mode, "fputs") == 0) {
        for (long i = 0; i < calls; i++)
            fputs("a line of about forty bytes, no format\n", stdout);
    } else if (strcmp(mode, "putc") == 0) {
        for (long i = 0; i < calls; i++)
            putc('x', stdout);
    } else if (strcmp(mode, "fwrite") == 0) {
        for (long i = 0; i < calls; i++)
            fwrite(block, 1, sizeof block, stdout);
    } else if (strcmp(mode, "scanf") == 0) {
        long x, sum = 0;
        calls = 0;
        while (scanf("%ld", &x) == 1) {
            sum += x;
            calls++;
        }
        if (sum == -1)
            puts("");
    } else if (strcmp(mode, "fwprintf") == 0) {
        for (long i = 0; i < calls; i++)
            fwprintf(stdout, L"line %ld of the run: %ls\n", i, L"tëxt");
    } else if (strcmp(mode, "fputws") == 0) {
        for (long i = 0; i < calls; i++)
            fputws(L"a line of about forty characters, wïde\n", stdout);
    } else if (strcmp(mode, "putwc") == 0) {
        for (long i = 0; i < calls; i++)
            putwc(L'é', stdout);
    } else {
        fprintf(stderr, "%s: unknown mode '%s' (valid: printf fputs putc fwrite scanf "
                "fwprintf fputws putwc)\n",
                argv[0], mode);
        return 2;
    }
    fflush(stdout);
    double ns = (now() - t0) * 1e9 / (double)(calls > 0 ? calls : 1);
    fprintf(stderr, "{\"mode\": \"%s\", \"calls\": %ld, \"ns\": %.1f}\n", mode, calls, ns);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a program linked with a library that is linked with
 * Capriccio, and not with Capriccio itself: Capriccio then comes after
 * libc in the global search order, its wrappers of read, accept, ... are
 * never called, and a blocking call would block a worker. The runtime
 * refuses to start (exit status 2, a message saying how to link):
 * io/library_after_libc_refused checks both. Preloaded, the library
 * comes first and the program must not be refused
 * (io/library_after_libc_preloaded); built with libcapriccio.a and
 * dep.c, the library is part of the program and must not be refused
 * either (io/library_linked_static_runs), though dlsym finds libc's read
 * there. Either way the program reads back, through dep.c, what it wrote
 * to a pipe, and a thread takes with sigwait the SIGHUP sent to the
 * process while every thread blocks it (APR's signal thread; a worker
 * that did not block it would take it and end the process). With
 * CAP_AFTER_LIBC=native (argument "native") the library stays out of the
 * way: the same runs on libc's threads, and no other kernel thread (a
 * worker) is left once the thread ended. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ssize_t linkorder_dep_read(int fd, void *buf, size_t len);

static void *hup_waiter(void *arg)
{
    sigset_t *hup = arg;
    int sig = 0;
    if (sigwait(hup, &sig) != 0 || sig != SIGHUP)
        return (void *)1;
    return NULL;
}

/* A SIGHUP sent to the process while every thread blocks it is taken by
 * a thread's sigwait. */
static bool hup_reaches_sigwait(void)
{
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    pthread_t t;
    void *res = (void *)1;
    return pthread_sigmask(SIG_BLOCK, &hup, NULL) == 0 &&
           pthread_create(&t, NULL, hup_waiter, &hup) == 0 && kill(getpid(), SIGHUP) == 0 &&
           pthread_join(t, &res) == 0 && res == NULL;
}

/* Kernel threads of this process, from /proc/self/task; -1 if unknown. */
static int kernel_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int p[2];
    char got[8] = { 0 };
    if (pipe(p) != 0 || write(p[1], "linked", 6) != 6)
        return 1;
    if (linkorder_dep_read(p[0], got, sizeof got) != 6 || memcmp(got, "linked", 6) != 0)
        return 1;
    /* (Under AddressSanitizer its runtime comes first and its
     * pthread_sigmask forwards to libc's, past a library linked into the
     * program: main's mask would be unknown to the runtime.) */
    bool sanitized = false;
#ifdef __SANITIZE_ADDRESS__
    sanitized = true;
#endif
    if (!sanitized && !hup_reaches_sigwait())
        return 1;
    if (argc > 1 && strcmp(argv[1], "native") == 0 && kernel_threads() != 1) {
        printf("%d kernel threads: the runtime started\n", kernel_threads());
        return 1;
    }
    puts("program ran");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: _Fork() (glibc 2.34, POSIX.1-2024: fork without fork
 * handlers, async-signal-safe), from a thread while others are blocked
 * and from a signal handler. No pthread_atfork handler runs, in parent or
 * child; the child's async-signal-safe calls work: it waits in read() for
 * a pipe the parent writes later, sleeps, writes back and exits with its
 * status; a child that execs a shell reading its stdin from a pipe gets
 * the line written after the exec; the parent's threads go on. Before the
 * library wrapped _Fork, its child shared the parent's I/O instances and
 * its read() never returned. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _Fork */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bystanders.h"
#include "check.h"

enum { HANDLER_FORKS = 20 };

static atomic_int prepared, parented, childed;

static void on_prepare(void) { atomic_fetch_add(&prepared, 1); }
static void on_parent(void) { atomic_fetch_add(&parented, 1); }
static void on_child(void) { atomic_fetch_add(&childed, 1); }

/* The child of a thread's _Fork: only async-signal-safe calls. Its exit
 * status says which check failed (7: none). */
static int child_of_thread(int in, int out)
{
    if (atomic_load(&childed) != 0 || atomic_load(&prepared) != 0)
        return 10; /* a fork handler ran */
    char buf[8];
    if (read(in, buf, sizeof buf) != 5 || memcmp(buf, "hello", 5) != 0)
        return 11; /* waits for the parent's write */
    struct timespec ts = { 0, 20 * 1000000L };
    if (nanosleep(&ts, NULL) != 0)
        return 12;
    if (write(out, "olleh", 5) != 5)
        return 13;
    return 7;
}

static void *forker(void *arg)
{
    (void)arg;
    int down[2], up[2];
    EXPECT_EQ(pipe(down), 0);
    EXPECT_EQ(pipe(up), 0);
    pid_t pid = _Fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(child_of_thread(down[0], up[1]));
    sleep_ms(50); /* the child is waiting in read by now, mostly */
    EXPECT_EQ(write(down[1], "hello", 5), 5);
    char buf[8];
    EXPECT_EQ(read(up[0], buf, sizeof buf), 5);
    EXPECT(memcmp(buf, "olleh", 5) == 0);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    return NULL;
}

/* A shell run by a _Fork child reads a line written after its exec. */
static void exec_child_reads_pipe(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = _Fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        if (dup2(p[0], 0) != 0)
            _exit(20);
        close(p[0]);
        close(p[1]);
        execl("/bin/sh", "sh", "-c", "read x && test \"$x\" = late", (char *)NULL);
        _exit(21);
    }
    close(p[0]);
    sleep_ms(100);
    EXPECT_EQ(write(p[1], "late\n", 5), 5);
    close(p[1]);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

static pid_t handler_pids[HANDLER_FORKS];
static atomic_int handler_forks;

static void on_usr1(int sig)
{
    (void)sig;
    int e = errno;
    pid_t pid = _Fork();
    if (pid == 0)
        _exit(42);
    if (pid > 0)
        handler_pids[atomic_fetch_add(&handler_forks, 1)] = pid;
    errno = e;
}

static void *raiser(void *arg)
{
    (void)arg;
    for (int i = 0; i < HANDLER_FORKS; i++)
        EXPECT_EQ(raise(SIGUSR1), 0);
    return NULL;
}

int main(void)
{
    alarm(30);
    EXPECT_EQ(pthread_atfork(on_prepare, on_parent, on_child), 0);
    bystanders_start();
    pthread_t tf;

    for (int round = 0; round < 3; round++) {
        EXPECT_EQ(pthread_create(&tf, NULL, forker, NULL), 0);
        EXPECT_EQ(pthread_join(tf, NULL), 0);
    }
    exec_child_reads_pipe();

    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    EXPECT_EQ(pthread_create(&tf, NULL, raiser, NULL), 0);
    EXPECT_EQ(pthread_join(tf, NULL), 0);
    EXPECT_EQ(atomic_load(&handler_forks), HANDLER_FORKS);
    for (int i = 0; i < HANDLER_FORKS; i++) {
        int status;
        EXPECT_EQ(waitpid(handler_pids[i], &status, 0), handler_pids[i]);
        EXPECT(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 42);
    }

    /* No handler ran for any _Fork; fork runs them (the control). */
    EXPECT_EQ(atomic_load(&prepared), 0);
    EXPECT_EQ(atomic_load(&parented), 0);
    EXPECT_EQ(atomic_load(&childed), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(atomic_load(&childed) == 1 ? 7 : 8);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_EQ(WEXITSTATUS(status), 7);
    EXPECT_EQ(atomic_load(&prepared), 1);
    EXPECT_EQ(atomic_load(&parented), 1);

    bystanders_finish();
    return 0;
}

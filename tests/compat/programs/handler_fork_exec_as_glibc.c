/* SPDX-License-Identifier: MIT */
/* Description: fork and _Fork inside a signal handler (POSIX.1-2024
 * lists _Fork as async-signal-safe), and exec inside one, with
 * descriptors the program made, as glibc and Linux give them:
 *  - the child of a handler's fork finds the program's pipe in the
 *    blocking mode it was made with (fcntl there), and a byte it writes
 *    into that pipe reaches a thread of the parent that was already
 *    blocked reading it (the library's private pipe must fall back to
 *    the kernel's events, and its reader must look again, once the
 *    handler returns);
 *  - a program exec'd from a handler inherits the program's pipe and
 *    socket in their blocking mode (no O_NONBLOCK in the flags of
 *    /proc/self/fdinfo), whatever the library made them underneath. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _Fork */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bystanders.h"
#include "check.h"

/* ---- fork in a handler, a reader blocked on the pipe ---------------- */

static int shared_pipe[2];
static atomic_int use_underscore; /* 1: _Fork, 0: fork */
static pid_t forked;
static atomic_int handler_ran;

/* The child's status: 0, or which check failed. */
static int child_in_handler(void)
{
    int rfl = fcntl(shared_pipe[0], F_GETFL);
    int wfl = fcntl(shared_pipe[1], F_GETFL);
    if (rfl < 0 || wfl < 0)
        return 10;
    if ((rfl | wfl) & O_NONBLOCK)
        return 11; /* the library's mode, not the program's */
    if (write(shared_pipe[1], "c", 1) != 1)
        return 12;
    return 0;
}

static void on_usr1(int sig)
{
    (void)sig;
    int e = errno;
    pid_t pid = atomic_load(&use_underscore) ? _Fork() : fork();
    if (pid == 0)
        _exit(child_in_handler());
    forked = pid;
    atomic_store(&handler_ran, 1);
    errno = e;
}

static atomic_int reader_waiting;

static void *read_one(void *arg)
{
    char *got = arg;
    atomic_store(&reader_waiting, 1);
    EXPECT_EQ(read(shared_pipe[0], got, 1), 1);
    return NULL;
}

static void fork_in_handler_reaches_blocked_reader(int underscore)
{
    EXPECT_EQ(pipe(shared_pipe), 0);
    atomic_store(&use_underscore, underscore);
    atomic_store(&handler_ran, 0);
    atomic_store(&reader_waiting, 0);
    char got = 0;
    pthread_t reader;
    EXPECT_EQ(pthread_create(&reader, NULL, read_one, &got), 0);
    while (!atomic_load(&reader_waiting))
        sleep_ms(1);
    sleep_ms(20); /* in its read by now, mostly (passes either way) */
    EXPECT_EQ(raise(SIGUSR1), 0);
    EXPECT_EQ(atomic_load(&handler_ran), 1);
    EXPECT(forked > 0);
    int status = 0;
    EXPECT_EQ(waitpid(forked, &status, 0), forked);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(pthread_join(reader, NULL), 0); /* the child's byte */
    EXPECT_EQ(got, 'c');
    close(shared_pipe[0]);
    close(shared_pipe[1]);
}

/* ---- exec in a handler ---------------------------------------------- */

static char command[256];

static void on_usr2(int sig)
{
    (void)sig;
    execl("/bin/sh", "sh", "-c", command, (char *)NULL);
    _exit(126);
}

/* The "flags:" field of each fdinfo line the new program printed, octal. */
static int count_nonblocking(const char *out, int *lines)
{
    int nonblocking = 0;
    *lines = 0;
    for (const char *p = strstr(out, "flags:"); p != NULL; p = strstr(p + 1, "flags:")) {
        unsigned long flags = strtoul(p + strlen("flags:"), NULL, 8);
        (*lines)++;
        if (flags & O_NONBLOCK)
            nonblocking++;
    }
    return nonblocking;
}

/* Runs with the pipe as standard output: makes a pipe and a socket pair
 * (non-blocking underneath on the library), then the handler execs a
 * program that prints their flags. */
static void raise_with_descriptors(void)
{
    int p[2], s[2];
    if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
        _exit(120);
    snprintf(command, sizeof command,
             "exec grep -h '^flags:' /proc/self/fdinfo/%d /proc/self/fdinfo/%d "
             "/proc/self/fdinfo/%d /proc/self/fdinfo/%d",
             p[0], p[1], s[0], s[1]);
    install_handler(SIGUSR2, on_usr2, 0);
    raise(SIGUSR2);
}

static void exec_in_handler_inherits_blocking_modes(void)
{
    char text[512];
    child_output(raise_with_descriptors, text, sizeof text);
    int lines = 0;
    int nonblocking = count_nonblocking(text, &lines);
    if (lines != 4 || nonblocking != 0)
        fprintf(stderr, "the exec'd program printed:\n%s", text);
    EXPECT_EQ(lines, 4);
    EXPECT_EQ(nonblocking, 0);
}

int main(void)
{
    alarm(30);
    bystanders_start();
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    for (int round = 0; round < 3; round++) {
        fork_in_handler_reaches_blocked_reader(1);
        fork_in_handler_reaches_blocked_reader(0);
    }
    exec_in_handler_inherits_blocking_modes();
    bystanders_finish();
    return 0;
}

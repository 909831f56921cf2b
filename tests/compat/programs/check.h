/* SPDX-License-Identifier: MIT */
/* A tiny assertion for the compatibility programs, which must stay plain
 * POSIX (so not tests/check.h's home). Prints both values, exits 1. */
#ifndef COMPAT_CHECK_H
#define COMPAT_CHECK_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPECT_EQ(a, b)                                                          \
    do {                                                                         \
        long long expect_a_ = (long long)(a), expect_b_ = (long long)(b);        \
        if (expect_a_ != expect_b_) {                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__,  \
                    __LINE__, #a, #b, expect_a_, expect_b_);                     \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define EXPECT(cond) EXPECT_EQ(!!(cond), 1)

/* A call that must fail with err: -1, and errno err. */
static inline void expect_fail(long r, int err)
{
    int e = errno;
    EXPECT_EQ(r, -1);
    EXPECT_EQ(e, err);
}

/* Sleeps ms milliseconds, whatever signals come. */
static inline void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Reads fd to its end into buf, NUL-terminated (at most size - 1 bytes:
 * the rest is left unread); the length read. */
static inline size_t read_to_end(int fd, char *buf, size_t size)
{
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        EXPECT(n > 0);
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* Forks a child whose standard output is a pipe and which runs child()
 * (it must exec or exit: 124 if it returns); reads what the child
 * printed into out (as read_to_end) and checks the child exited 0. */
static inline void child_output(void (*child)(void), char *out, size_t size)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        if (dup2(p[1], 1) != 1)
            _exit(125);
        close(p[0]);
        close(p[1]);
        child();
        _exit(124);
    }
    close(p[1]);
    read_to_end(p[0], out, size);
    close(p[0]);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

/* Installs fn as sig's handler with sa_flags flags and an empty mask. */
static inline void install_handler(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    EXPECT_EQ(sigaction(sig, &sa, NULL), 0);
}

/* Installs fn as sig's SA_SIGINFO | SA_RESTART handler, empty mask. */
static inline void install_action(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    EXPECT_EQ(sigaction(sig, &sa, NULL), 0);
}

/* The time ms milliseconds from now on clock, as an absolute timespec. */
static inline struct timespec after_ms(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_nsec += ms * 1000000L;
    while (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Whether clock has reached when. */
static inline int reached(clockid_t clock, struct timespec when)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return now.tv_sec > when.tv_sec || (now.tv_sec == when.tv_sec && now.tv_nsec >= when.tv_nsec);
}

#endif

/* SPDX-License-Identifier: MIT */
/* Description: a program built with -fstack-protector-all (tests.cmake;
 * -strong is in Debian's and Ubuntu's default flags) keeps its split-stack
 * prologues: the calls to __stack_chk_fail bind to libcapriccio-linked's
 * (src/stack/stack_chk.S), split-stack code, so lld does not turn every
 * function with a canary into a caller of non-split code (before: 16 KiB
 * more room asked by every such prologue, a non-split link for each chunk
 * of a deep recursion). And a smashed canary still ends the process as
 * glibc's would: the message on stderr, then SIGABRT, even with a handler
 * for it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "linked_util.h"

enum { DEPTH = 200 };

static long leaf(long x)
{
    return x;
}

static void *diver(void *arg)
{
    CHECK_EQ(dive(DEPTH, leaf, 3), 3);
    return arg;
}

static volatile int smash_at = 64; /* past the canary, wherever it sits */

/* Writes past its buffer, over the canary. */
static __attribute__((noipa)) void smash(void)
{
    volatile char buf[16] __attribute__((unused));
    for (int i = 0; i < smash_at; i++)
        buf[i] = (char)0xa5;
}

static void ignore_abort(int sig)
{
    (void)sig;
}

int main(void)
{
    cap_stack_stats_t a = stats();
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t b = stats();
    uint64_t links = b.chunks_linked - a.chunks_linked;
    uint64_t nonsplit = b.nonsplit_links - a.nonsplit_links;
    fprintf(stderr, "%llu links, %llu for non-split code\n", (unsigned long long)links,
            (unsigned long long)nonsplit);
    CHECK_GE(links, DEPTH * 1000 / 16384); /* it did link */
    /* diver's own (its CHECK may call fprintf); with glibc's
     * __stack_chk_fail, every one of its links (15 of 15, against 87
     * links here: each one then had 16 KiB more) */
    CHECK_LE(nonsplit, 1);

    int out[2];
    CHECK_EQ(pipe(out), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        dup2(out[1], 2);
        signal(SIGABRT, ignore_abort); /* glibc's abort ends the process anyway */
        smash();
        _exit(0);
    }
    close(out[1]);
    char text[256] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof text - 1 && (n = read(out[0], text + got, sizeof text - 1 - got)) > 0)
        got += (size_t)n;
    close(out[0]);
    int status = 0;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(text, "*** stack smashing detected ***") != NULL);
    return 0;
}

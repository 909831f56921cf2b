/* SPDX-License-Identifier: MIT */
/* Fork helpers for tests of what a fork's child sees: the child runs a
 * function and exits with its result; the parent checks the status (a
 * child killed by a signal, usually its own alarm because it hung, is
 * reported as such). */
#ifndef CAP_TEST_FORK_UTIL_H
#define CAP_TEST_FORK_UTIL_H

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* The child's exit status; fails the test if it did not exit. */
static inline int child_exit_status(pid_t pid)
{
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "child killed by signal %d (hung)\n", WTERMSIG(status));
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Forks a child that exits with fn()'s result; returns its pid. */
static inline pid_t fork_child(int (*fn)(void))
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0)
        _exit(fn());
    return pid;
}

/* Forks; the child exits with child()'s result, which must be 0. */
static inline void run_in_fork_child(int (*child)(void))
{
    CHECK_EQ(child_exit_status(fork_child(child)), 0);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * For tests whose subject kills the process (stack overflow reports, bad
 * settings): the test re-runs its own executable with a mode argument and
 * extra environment, and collects the child's stderr and wait status.
 */
#ifndef CAP_TESTS_STACK_CHILD_H
#define CAP_TESTS_STACK_CHILD_H

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

extern char **environ;

/* Runs "/proc/self/exe mode" with env_extra (NULL-terminated VAR=value
 * strings) added to the environment; returns the wait status and fills
 * out (NUL-terminated) with what the child wrote to stderr. */
static int run_child(const char *mode, const char *const *env_extra, char *out, size_t outsz)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n] = '\0';

    size_t nenv = 0, nextra = 0;
    while (environ[nenv] != NULL)
        nenv++;
    while (env_extra != NULL && env_extra[nextra] != NULL)
        nextra++;
    char **env = calloc(nenv + nextra + 1, sizeof *env);
    CHECK(env != NULL);
    memcpy(env, environ, nenv * sizeof *env);
    if (nextra != 0)
        memcpy(env + nenv, env_extra, nextra * sizeof *env);

    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    char *argv[] = { self, (char *)mode, NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, self, &fa, NULL, argv, env), 0);
    close(fds[1]);
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fds[0], out + len, outsz - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        if (len == outsz - 1)
            break;
    }
    out[len] = '\0';
    close(fds[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return status;
}

#define CHECK_CONTAINS(hay, needle)                                                   \
    do {                                                                              \
        if (strstr((hay), (needle)) == NULL) {                                        \
            fprintf(stderr, "%s:%d: expected \"%s\" in:\n%s\n", __FILE__, __LINE__,  \
                    (needle), (hay));                                                 \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#endif /* CAP_TESTS_STACK_CHILD_H */

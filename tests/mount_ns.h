/* SPDX-License-Identifier: MIT */
/*
 * A test's own view of system directories: the syslog tests bind
 * /dev/log (syslog's fixed address) and make /dev/console, a lookup test
 * makes nscd's socket in /var/run, none of which may touch the machine's.
 * mount_ns_enter(argv, dirs), first in main, execs the program again
 * under unshare(1) in a new mount namespace (with a user namespace too
 * when not root), where it mounts an empty tmpfs on each of dirs (a
 * NULL-ended list) and returns: nothing outside sees them. Exits 77
 * (skipped) where namespaces or the mounts are refused. Plain C: the
 * compat programs use it.
 */
#ifndef CAP_TESTS_MOUNT_NS_H
#define CAP_TESTS_MOUNT_NS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define MOUNT_NS_INSIDE "CAP_TEST_MOUNT_NS_INSIDE"

/* unshare's options, then the command from `command` on; returns argv's
 * length. */
static inline int mount_ns_argv(const char **out, int room, char *const *command)
{
    int n = 0;
    out[n++] = "unshare";
    if (geteuid() != 0)
        out[n++] = "--map-root-user";
    out[n++] = "--mount";
    out[n++] = "--propagation";
    out[n++] = "private";
    for (int i = 0; command[i] != NULL && n < room - 1; i++)
        out[n++] = command[i];
    out[n] = NULL;
    return n;
}

static inline void mount_ns_enter(char **argv, const char *const *dirs)
{
    if (getenv(MOUNT_NS_INSIDE) != NULL) {
        for (int i = 0; dirs[i] != NULL; i++) {
            if (mount("none", dirs[i], "tmpfs", 0, "mode=0755") != 0) {
                fprintf(stderr, "skipped: no tmpfs on %s in the namespace: %s\n", dirs[i],
                        strerror(errno));
                exit(77);
            }
        }
        return;
    }
    /* Whether unshare works here at all, so that its refusal skips. */
    char *probe[] = { "true", NULL };
    const char *args[64];
    mount_ns_argv(args, 64, probe);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execvp("unshare", (char *const *)args);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "skipped: unshare(1) cannot make a mount namespace here\n");
        exit(77);
    }

    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0) {
        perror("readlink /proc/self/exe");
        exit(1);
    }
    self[len] = '\0';
    argv[0] = self;
    mount_ns_argv(args, 64, argv);
    setenv(MOUNT_NS_INSIDE, "1", 1);
    execvp("unshare", (char *const *)args);
    perror("exec unshare");
    exit(1);
}

#endif /* CAP_TESTS_MOUNT_NS_H */

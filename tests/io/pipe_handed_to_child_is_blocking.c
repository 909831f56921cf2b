/* SPDX-License-Identifier: MIT */
/* Description: the runtime serves the pipes it creates non-blocking
 * underneath (plain read/write), but code that bypasses the wrappers gets
 * the blocking pipe it expects: a child made by posix_spawn (its stdin
 * dup2'ed from the pipe, and an inherited end) or by fork sees no
 * O_NONBLOCK, nor does a stdio stream made by fdopen; and a pipe given
 * back that way still parks only the reading thread. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

static int in_fd, out_fd;

static void *late_writer(void *arg)
{
    (void)arg;
    cap_sleep_ns(20000000);
    CHECK_EQ(write(out_fd, "tok", 3), 3);
    return NULL;
}

static int wait_child(pid_t pid)
{
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st));
    return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) /* spawned: 0 if both blocking */
        return kernel_nonblock(0) || kernel_nonblock(atoi(argv[2]));

    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0); /* the application's view */
    CHECK(kernel_nonblock(p[0]));                    /* owned by the runtime */

    char num[16];
    snprintf(num, sizeof num, "%d", p[1]);
    char *args[] = { "/proc/self/exe", "child", num, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[0], 0);
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    CHECK_EQ(wait_child(pid), 0);
    CHECK(!kernel_nonblock(p[0]));
    CHECK(!kernel_nonblock(p[1]));
    CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);

    /* Given back, the pipe still parks only its reader (with one worker a
     * blocked worker would never run the writer: the test would hang). */
    in_fd = p[0];
    out_fd = p[1];
    cap_thread_t t = spawn(late_writer, NULL);
    char buf[8];
    CHECK_EQ(read(in_fd, buf, sizeof buf), 3);
    join(t);

    /* fork: a pipe made afterwards is owned again, and given back. */
    int q[2];
    CHECK_EQ(pipe(q), 0);
    CHECK(kernel_nonblock(q[0]));
    pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0)
        _exit(kernel_nonblock(q[0]) || kernel_nonblock(q[1]));
    CHECK_EQ(wait_child(pid), 0);

    /* fdopen: glibc's stdio reads through its internal read. */
    int r[2];
    CHECK_EQ(pipe(r), 0);
    CHECK(kernel_nonblock(r[0]));
    CHECK_EQ(write(r[1], "line\n", 5), 5);
    FILE *fp = fdopen(r[0], "r");
    CHECK(fp != NULL);
    CHECK(!kernel_nonblock(r[0]));
    char line[16];
    CHECK(fgets(line, sizeof line, fp) != NULL);
    CHECK_EQ(strcmp(line, "line\n"), 0);
    CHECK_EQ(close(r[1]), 0);
    CHECK(fgets(line, sizeof line, fp) == NULL);
    CHECK(feof(fp) && !ferror(fp));
    CHECK_EQ(fclose(fp), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a child that execs at once (posix_spawn, posix_spawnp,
 * popen, system) takes no pipe, FIFO or eventfd with FD_CLOEXEC from the
 * runtime: they stay non-blocking underneath (their fast paths; the
 * kernel's flags), while one without FD_CLOEXEC is given back blocking
 * at the spawn, and one a file action dup2's into the child is given
 * back when the action is added, so the child reads it blocking (the
 * child checks); popen's give-back of one without FD_CLOEXEC is checked
 * on its own too. Before, every spawn gave back them all for good. Then
 * an eventfd write that would overflow the counter, after the spawns,
 * still parks only its thread: on one worker the reader, a thread of the
 * same worker, takes the count and the writer goes on (given back, the
 * write waited in the kernel, and the worker with it). */
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

static void wait_ok(pid_t pid)
{
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

enum { KEPT, IN_W, EVENT, FIFO, N_KEPT };

static int kept[N_KEPT];

static void check_kept(void)
{
    for (int i = 0; i < N_KEPT; i++)
        CHECK(kernel_nonblock(kept[i]));
}

static const uint64_t NEAR_MAX = UINT64_MAX - 16;

static void *overflow_writer(void *arg)
{
    (void)arg;
    uint64_t add = 100; /* POLLOUT says room; the sum would overflow */
    CHECK_EQ(write(kept[EVENT], &add, sizeof add), (ssize_t)sizeof add);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2) { /* the spawned program: stdin blocking, with the byte */
        CHECK_EQ(kernel_nonblock(0), 0);
        char c;
        CHECK_EQ(read(0, &c, 1), 1);
        CHECK_EQ(c, 'x');
        return 0;
    }
    int cloexec[2], inherited[2], in[2];
    CHECK_EQ(pipe2(cloexec, O_CLOEXEC), 0);
    CHECK_EQ(pipe(inherited), 0);
    CHECK_EQ(pipe2(in, O_CLOEXEC), 0);
    char fifo[32];
    temp_fifo(fifo);
    kept[KEPT] = cloexec[0];
    kept[IN_W] = in[1];
    kept[EVENT] = eventfd(0, EFD_CLOEXEC);
    CHECK_GE(kept[EVENT], 0);
    kept[FIFO] = open(fifo, O_RDWR | O_CLOEXEC);
    CHECK_GE(kept[FIFO], 0);
    CHECK_EQ(unlink(fifo), 0);
    check_kept();
    CHECK(kernel_nonblock(inherited[0]));
    CHECK(kernel_nonblock(in[0]));

    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, in[0], 0), 0);
    CHECK_EQ(kernel_nonblock(in[0]), 0); /* given back with the action */
    CHECK(kernel_nonblock(inherited[0])); /* not yet */
    check_kept();

    CHECK_EQ(write(in[1], "x", 1), 1);
    char *child[] = { argv[0], "child", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, child, environ), 0);
    wait_ok(pid);
    CHECK_EQ(posix_spawn_file_actions_destroy(&fa), 0);
    CHECK_EQ(kernel_nonblock(inherited[0]), 0);
    CHECK_EQ(kernel_nonblock(inherited[1]), 0);
    check_kept();

    char *truth[] = { "true", NULL };
    CHECK_EQ(posix_spawnp(&pid, "true", NULL, NULL, truth, environ), 0);
    wait_ok(pid);
    check_kept();
    FILE *p = popen("true", "r");
    CHECK(p != NULL);
    CHECK_EQ(pclose(p), 0);
    check_kept();
    CHECK_EQ(system("true"), 0);
    check_kept();

    /* A pipe made without FD_CLOEXEC after the first spawn: the next one
     * gives it back too, popen's as system's. */
    int late[2], late_popen[2];
    CHECK_EQ(pipe(late), 0);
    CHECK(kernel_nonblock(late[0]));
    CHECK_EQ(system("true"), 0);
    CHECK_EQ(kernel_nonblock(late[0]), 0);
    check_kept();
    CHECK_EQ(pipe(late_popen), 0);
    CHECK(kernel_nonblock(late_popen[1]));
    p = popen("true", "r");
    CHECK(p != NULL);
    CHECK_EQ(pclose(p), 0);
    CHECK_EQ(kernel_nonblock(late_popen[0]), 0);
    CHECK_EQ(kernel_nonblock(late_popen[1]), 0);
    check_kept();

    uint64_t v = NEAR_MAX;
    CHECK_EQ(write(kept[EVENT], &v, sizeof v), (ssize_t)sizeof v);
    cap_thread_t t = spawn(overflow_writer, NULL);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* on one worker the writer waits before the read */
    CHECK_EQ(read(kept[EVENT], &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(v, NEAR_MAX);
    join(t);
    CHECK_EQ(read(kept[EVENT], &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(v, 100);

    int all[] = { cloexec[0], cloexec[1], inherited[0], inherited[1], in[0], in[1],
                  kept[EVENT], kept[FIFO], late[0], late[1], late_popen[0], late_popen[1] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_EQ(close(all[i]), 0);
    return 0;
}

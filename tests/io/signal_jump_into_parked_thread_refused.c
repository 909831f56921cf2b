/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that longjmps into a user thread parked
 * in a blocking call is refused with a message (README, Limits), not left
 * to corrupt the runtime. With every user thread parked, the handler runs
 * in a worker's scheduler; jumping from there into the parked thread's
 * frames abandoned the scheduler's context and the call's wait records
 * (bash's wait builtin does this: under LD_PRELOAD a script with a trap
 * crashed in the pool thread still running its offloaded waitpid). The
 * program runs itself as a child that parks main in a pipe read and jumps
 * into it from a SIGALRM handler; the child must die of SIGABRT with the
 * message on stderr. (A handler that jumps within the thread it
 * interrupted is fine: io/signal_handler_left_by_longjmp.) */
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

static sigjmp_buf env;

static void jump_back(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static int child(void)
{
    if (sigsetjmp(env, 1) != 0) {
        puts("jumped back into the parked thread");
        return 4;
    }
    struct sigaction sa = { .sa_handler = jump_back };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct itimerval it = { { 0, 0 }, { 0, 20000 } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    char c;
    ssize_t r = read(p[0], &c, 1); /* parks until the signal */
    (void)r;
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int errp[2];
    CHECK_EQ(pipe(errp), 0);
    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, errp[1], 2), 0);
    char *args[] = { argv[0], "child", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    CHECK_EQ(close(errp[1]), 0);
    char err[4096];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof err - 1 && (r = read(errp[0], err + got, sizeof err - 1 - got)) > 0)
        got += (size_t)r;
    err[got] = '\0';
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fprintf(stderr, "child status %#x, stderr: %s\n", status, err);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(err, "jumped (longjmp) into a user thread") != NULL);
    puts("ok");
    return 0;
}

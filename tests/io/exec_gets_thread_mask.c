/* SPDX-License-Identifier: MIT */
/* Description: a program started by a user thread (posix_spawn, popen,
 * system, execv, execl, execle, execlp) starts with that thread's signal
 * mask, as POSIX says, not with its worker's kernel thread's (the signals
 * every thread blocks: io/sigmask.h), nor with the runtime's kick
 * (SIGURG) blocked, which the thread does not block (system()'s command
 * started with it blocked, the mask of the pool thread that runs it). Here main blocks SIGUSR1 while another thread, parked,
 * accepts it, so the workers do not block it; each child reports whether
 * it started with SIGUSR1 blocked. Before, every child started with it
 * unblocked. With main's mask back to empty, a child starts unblocked. */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

enum { BLOCKED = 10, UNBLOCKED = 11, KICK_BLOCKED = 12 };

static int report(void)
{
    sigset_t m;
    sigemptyset(&m);
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &m), 0);
    if (sigismember(&m, SIGURG) == 1)
        return KICK_BLOCKED;
    return sigismember(&m, SIGUSR1) == 1 ? BLOCKED : UNBLOCKED;
}

/* Accepts SIGUSR1 (unblocks it for itself) and parks until told. */
static void *accepting(void *arg)
{
    int fd = *(int *)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    char c;
    CHECK_EQ(read(fd, &c, 1), 1);
    return NULL;
}

static int status_of(pid_t pid)
{
    int status = -1;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int spawned(const char *self)
{
    char *args[] = { (char *)self, "report", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, self, NULL, NULL, args, environ), 0);
    return status_of(pid);
}

static int popened(const char *self)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "exec '%s' report", self);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL);
    int status = pclose(f);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int systemed(const char *self)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "exec '%s' report", self);
    int status = system(cmd);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* A child that makes an accepting thread of its own, then execs. */
static int execed(const char *self, int form)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        int p[2];
        if (pipe(p) != 0)
            _exit(2);
        cap_thread_t t;
        if (cap_thread_create(&t, NULL, accepting, &p[0]) != 0)
            _exit(3);
        cap_sleep_ns(2000000); /* it unblocks and parks */
        if (form == 0)
            execv(self, (char *[]){ (char *)self, "report", NULL });
        else if (form == 1)
            execl(self, self, "report", (char *)NULL);
        else if (form == 2)
            execle(self, self, "report", (char *)NULL, environ);
        else
            execlp(self, self, "report", (char *)NULL);
        _exit(4);
    }
    return status_of(pid);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "report") == 0)
        return report();
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK_GT(n, 0);
    self[n] = '\0';

    int p[2];
    CHECK_EQ(pipe(p), 0);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    cap_thread_t t = spawn(accepting, &p[0]);
    cap_sleep_ns(2000000); /* it unblocks and parks */

    CHECK_EQ(spawned(self), BLOCKED);
    CHECK_EQ(popened(self), BLOCKED);
    CHECK_EQ(systemed(self), BLOCKED);
    for (int form = 0; form < 4; form++)
        CHECK_EQ(execed(self, form), BLOCKED);
    CHECK_EQ(report(), BLOCKED); /* main's own mask is unchanged */

    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(spawned(self), UNBLOCKED);
    CHECK_EQ(systemed(self), UNBLOCKED);
    CHECK_EQ(execed(self, 2), UNBLOCKED);
    CHECK_EQ(write(p[1], "x", 1), 1);
    join(t);
    puts("ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: signals pending for the thread that calls exec, which it
 * blocks, are pending in the new program, as Linux keeps a thread's
 * pending signals across execve. A signal sent to a user thread (raise,
 * pthread_kill, pthread_sigqueue) waits in the runtime's record of that
 * thread (io/sigdirect.h), which the exec drops: before, the new program
 * started with none (sigpending empty, sigwait waiting for good). Here a
 * child blocks SIGUSR1 and SIGRTMIN+1, raises SIGUSR1, queues SIGRTMIN+1
 * twice to itself, and execs this program, which must find SIGUSR1 once
 * and SIGRTMIN+1 twice, and nothing more. And an exec that fails leaves
 * the same set pending in the caller, with no copy left behind in the
 * kernel (each taken exactly as often as it was sent). */
#include "io/io_util.h"

extern char **environ;

enum { REPORT_OK = 7 };

/* Takes sig without waiting as often as it comes; returns the count. */
static int take_all(int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    struct timespec zero = { 0, 0 };
    int n = 0;
    while (sigtimedwait(&one, NULL, &zero) == sig)
        n++;
    CHECK_EQ(errno, EAGAIN);
    return n;
}

/* The pending set as expected: SIGUSR1 once, SIGRTMIN+1 twice, SIGUSR2
 * not at all. */
static bool as_sent(void)
{
    sigset_t p;
    sigemptyset(&p);
    CHECK_EQ(sigpending(&p), 0);
    if (sigismember(&p, SIGUSR1) != 1 || sigismember(&p, SIGRTMIN + 1) != 1 ||
        sigismember(&p, SIGUSR2) != 0)
        return false;
    return take_all(SIGUSR1) == 1 && take_all(SIGRTMIN + 1) == 2 && take_all(SIGUSR2) == 0;
}

static void block_and_send(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    sigaddset(&s, SIGRTMIN + 1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    CHECK_EQ(raise(SIGUSR1), 0);
    union sigval v = { .sival_int = 1 };
    CHECK_EQ(cap_thread_sigqueue(cap_thread_self(), SIGRTMIN + 1, v), 0);
    CHECK_EQ(cap_thread_sigqueue(cap_thread_self(), SIGRTMIN + 1, v), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "report") == 0)
        return as_sent() ? REPORT_OK : 1;

    /* A failed exec: nothing changes. */
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        block_and_send();
        char *args[] = { "none", NULL };
        if (execve("/nonexistent/capriccio-exec-test", args, environ) != -1 || errno != ENOENT)
            _exit(2);
        _exit(as_sent() ? REPORT_OK : 3);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), REPORT_OK);

    /* An exec: the new program has them. */
    pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        block_and_send();
        char *args[] = { argv[0], "report", NULL };
        execve("/proc/self/exe", args, environ);
        _exit(4);
    }
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), REPORT_OK);
    puts("ok");
    return 0;
}

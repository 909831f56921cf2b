/* SPDX-License-Identifier: MIT */
/* Description: fork while another thread keeps calling sigaction. The
 * library's sigaction keeps its table under a lock (src/stack/signal.c);
 * a child forked while another kernel thread held it would inherit it
 * held by a thread that does not exist there, and the child's own
 * sigaction (resetting handlers before exec) would spin forever. A
 * plain kernel thread installs handlers in a loop while main forks again
 * and again; each child installs a handler, raises the signal, checks
 * that the handler ran and exits. The installer holds the lock for much
 * of its loop, so without the fix some child of the run spins (the
 * unfixed build failed on its first try): the parent kills a child that
 * has not exited after a generous bound, and fails.
 * Children die with the parent (PR_SET_PDEATHSIG) and are always reaped. */
#include <capriccio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { FORKS = 300, CHILD_BOUND_MS = 20000 };

static atomic_int stop;
static atomic_long installs;
static volatile sig_atomic_t child_handled;

static void on_usr1(int sig)
{
    (void)sig;
    child_handled = 1;
}

static void on_usr2(int sig)
{
    (void)sig;
}

static void *installer(void *arg)
{
    (void)arg;
    struct sigaction a = { .sa_handler = on_usr2 }, b = { .sa_handler = SIG_IGN };
    sigemptyset(&a.sa_mask);
    sigemptyset(&b.sa_mask);
    for (long n = 0; !atomic_load(&stop); n++) {
        CHECK_EQ(sigaction(SIGUSR2, n % 2 ? &a : &b, NULL), 0);
        atomic_fetch_add(&installs, 1);
    }
    return NULL;
}

static void child(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        _exit(2);
    raise(SIGUSR1);
    _exit(child_handled ? 0 : 3);
}

/* Reaps pid; kills it first if it has not exited within the bound. */
static int reap(pid_t pid)
{
    int status = 0;
    for (int ms = 0; ms < CHILD_BOUND_MS; ms++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        CHECK(r >= 0);
        if (r == pid)
            return status;
        cap_sleep_ns(1000000);
    }
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    return -1;
}

int main(void)
{
    pthread_t t; /* a plain kernel thread: this file is not built through the header */
    CHECK_EQ(pthread_create(&t, NULL, installer, NULL), 0);
    while (atomic_load(&installs) == 0)
        cap_sleep_ns(100000);
    int bad = 0;
    for (int i = 0; i < FORKS && bad == 0; i++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            child();
        int status = reap(pid);
        if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad = status < 0 ? -1 : status;
    }
    atomic_store(&stop, 1);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(bad, 0);
    return 0;
}

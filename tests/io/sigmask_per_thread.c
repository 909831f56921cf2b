/* SPDX-License-Identifier: MIT */
/* Description: each user thread has its own signal mask, as POSIX says
 * (io/sigmask.h): pthread_sigmask and sigprocmask on a thread change and
 * report that thread's mask only, a new thread starts with its creator's,
 * and the older calls (sighold, sigrelse, sigblock, sigsetmask,
 * siggetmask) act on it too. Bad arguments fail as in glibc: an unknown
 * `how` with EINVAL, an unreadable set with EFAULT; SIGKILL and SIGSTOP
 * are left out silently; set and old may be the same. siglongjmp puts
 * back the mask sigsetjmp saved. A fork's child starts with the forking
 * thread's mask, and a signal it blocks stays pending there. Before,
 * pthread_sigmask changed the worker's kernel thread (shared by the
 * threads it runs), a new thread inherited whatever its worker had, and
 * the header's pthread_sigmask refused any change with ENOTSUP. */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "io/io_util.h"

static bool blocked(int sig)
{
    sigset_t cur;
    sigemptyset(&cur);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
    return sigismember(&cur, sig) == 1;
}

static sigset_t one(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    return s;
}

struct turn {
    atomic_int step;
};

static void wait_step(struct turn *t, int step)
{
    while (atomic_load(&t->step) < step)
        cap_yield();
}

/* Inherits USR1 blocked; blocks USR2 for itself, which main must not see. */
static void *child_thread(void *arg)
{
    struct turn *t = arg;
    CHECK(blocked(SIGUSR1));
    CHECK(!blocked(SIGUSR2));
    sigset_t s = one(SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    atomic_store(&t->step, 1);
    wait_step(t, 2); /* main looked, and unblocked USR1 for itself */
    CHECK(blocked(SIGUSR1));
    CHECK(blocked(SIGUSR2));
    return NULL;
}

static sigjmp_buf env;

int main(void)
{
    /* Inheritance and independence. */
    sigset_t usr1 = one(SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    struct turn t = { 0 };
    cap_thread_t c = spawn(child_thread, &t);
    wait_step(&t, 1);
    CHECK(blocked(SIGUSR1));
    CHECK(!blocked(SIGUSR2));
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    CHECK(!blocked(SIGUSR1));
    atomic_store(&t.step, 2);
    join(c);

    /* Errors and edge cases. */
    sigset_t s = one(SIGUSR1), old;
    CHECK_EQ(pthread_sigmask(12345, &s, NULL), EINVAL);
    errno = 0;
    CHECK_EQ(sigprocmask(-1, &s, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, (const sigset_t *)8, NULL), EFAULT);
    CHECK_EQ(pthread_sigmask(12345, NULL, &old), 0); /* how is ignored without set */
    sigset_t ks;
    sigemptyset(&ks);
    sigaddset(&ks, SIGKILL);
    sigaddset(&ks, SIGSTOP);
    sigaddset(&ks, SIGHUP);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &ks, NULL), 0);
    CHECK(blocked(SIGHUP));
    CHECK(!blocked(SIGKILL));
    CHECK(!blocked(SIGSTOP));
    sigset_t both = one(SIGUSR2);
    sigset_t *volatile alias = &both; /* the same set for both */
    CHECK_EQ(sigprocmask(SIG_BLOCK, alias, alias), 0);
    CHECK(blocked(SIGUSR2));
    CHECK_EQ(sigismember(&both, SIGUSR2), 0); /* the old mask */
    CHECK_EQ(sigismember(&both, SIGHUP), 1);
    sigset_t none;
    sigemptyset(&none);
    CHECK_EQ(sigprocmask(SIG_SETMASK, &none, NULL), 0);
    CHECK(!blocked(SIGHUP));

    /* The older calls (deprecated in glibc's header, still exported). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK_EQ(sighold(SIGUSR1), 0);
    CHECK(blocked(SIGUSR1));
    CHECK_EQ(sigrelse(SIGUSR1), 0);
    CHECK(!blocked(SIGUSR1));
    errno = 0;
    CHECK_EQ(sighold(0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sigblock((1 << (SIGUSR2 - 1))), 0);
    CHECK(blocked(SIGUSR2));
    CHECK_EQ(siggetmask(), (1 << (SIGUSR2 - 1)));
    CHECK_EQ(sigsetmask(0), (1 << (SIGUSR2 - 1)));
    CHECK(!blocked(SIGUSR2));
#pragma GCC diagnostic pop

    /* siglongjmp restores what sigsetjmp saved (main is the only thread,
     * so its mask is what was saved). */
    CHECK_EQ(sigprocmask(SIG_SETMASK, &none, NULL), 0);
    volatile int jumped = 0;
    if (sigsetjmp(env, 1) == 0) {
        CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
        CHECK(blocked(SIGUSR1));
        jumped = 1;
        siglongjmp(env, 1);
    }
    CHECK_EQ(jumped, 1);
    CHECK(!blocked(SIGUSR1));

    /* A fork's child: the forking thread's mask, and what it blocks
     * stays pending. */
    CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        if (!blocked(SIGUSR1) || kill(getpid(), SIGUSR1) != 0)
            _exit(2);
        sigset_t p;
        if (sigpending(&p) != 0 || sigismember(&p, SIGUSR1) != 1)
            _exit(3);
        struct timespec zero = { 0, 0 };
        if (sigtimedwait(&usr1, NULL, &zero) != SIGUSR1)
            _exit(4);
        _exit(0);
    }
    int status = -1;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &usr1, NULL), 0);
    puts("ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a handler that siglongjmps out of fork (an async-signal-
 * safe call) has its jump handed to the thread and made as fork returns
 * (io/sigsafe.h). The handler ran in the parent: the child, which the
 * kernel gives no pending signal and whose fork returns 0, must not make
 * the parent's jump. The old code handed the jump in memory the child
 * inherits, and the child's fork made it too: the child ran the parent's
 * code after the sigsetjmp.
 *
 * A timer aimed at the kernel thread this thread runs on jumps back
 * before a loop of forks; each child exits at once with 0, one that
 * lands after the sigsetjmp exits with LANDED_IN_CHILD. The parent reaps
 * every child (the pid of a fork left by a jump is lost: waitpid(-1)). */
#include <setjmp.h>
#include <signal.h>
#include <time.h>

#include "io/io_util.h"

enum { FORKS = 3000, LANDINGS = 300, LANDED_IN_CHILD = 42 };

/* The timer's period. Under ASan a signal's delivery and dispatch on one
 * worker under uring takes about as long as 30 us, so the loop between
 * them barely moved (30-50 s against 1 s, past the timeout on a loaded
 * CI machine); forks there are slower too, so jumps still land in them. */
#ifdef __SANITIZE_ADDRESS__
enum { PERIOD_NS = 100000 };
#else
enum { PERIOD_NS = 30000 };
#endif

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static pid_t parent;

static void jump_back(int sig)
{
    (void)sig;
    if (!armed)
        return;
    armed = 0;
    siglongjmp(env, 1);
}

/* Every child there is, ended: each must have exited with 0. */
static void reap_all(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, 0)) != 0) {
        if (pid < 0) {
            if (errno == EINTR) /* the timer: no SA_RESTART */
                continue;
            CHECK_EQ(errno, ECHILD);
            return;
        }
        if (WIFEXITED(st) && WEXITSTATUS(st) == LANDED_IN_CHILD)
            fprintf(stderr, "a child made the parent's jump out of fork\n");
        CHECK(WIFEXITED(st));
        CHECK_EQ(WEXITSTATUS(st), 0);
    }
}

int main(void)
{
    parent = getpid();
    install_handler(SIGALRM, jump_back, 0);
    struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
    sev._sigev_un._tid = gettid();
    timer_t timer;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec every = { { 0, PERIOD_NS }, { 0, PERIOD_NS } };
    CHECK_EQ(timer_settime(timer, 0, &every, NULL), 0);

    static volatile int forks, landed; /* kept across the jumps */
    if (sigsetjmp(env, 1) != 0) {
        if (getpid() != parent)
            _exit(LANDED_IN_CHILD);
        landed++;
        reap_all();
    }
    while (forks < FORKS && landed < LANDINGS) {
        forks++;
        armed = 1;
        pid_t pid = fork();
        armed = 0;
        if (pid == 0)
            _exit(0);
        CHECK(pid > 0);
        reap_all();
    }
    struct itimerspec off = { { 0, 0 }, { 0, 0 } };
    CHECK_EQ(timer_settime(timer, 0, &off, NULL), 0);
    CHECK_EQ(timer_delete(timer), 0);
    reap_all();
    return 0;
}

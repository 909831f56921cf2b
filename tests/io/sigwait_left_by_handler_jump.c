/* SPDX-License-Identifier: MIT */
/* Description: a handler that siglongjmps out of sigwait (a signal
 * outside the waited set, sent to the process or to the waiting thread)
 * leaves it, as on Linux: the jump lands, and the thread's mask is the
 * one sigsetjmp saved. sigwait goes on waiting after a handler that
 * returns (glibc's loops on EINTR), and it looped so after one whose jump
 * was handed to the thread as well: every new wait was interrupted at
 * once by the jump still due, and the thread spun for ever. Afterwards
 * sigwait still takes a signal of its set. */
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

#include "io/io_util.h"

static sigjmp_buf env;
static volatile sig_atomic_t jumps;
static atomic_int waiting, how;
static cap_thread_t waiter_thread;

static void on_usr2(int sig)
{
    (void)sig;
    jumps++;
    siglongjmp(env, 1);
}

static void *sender(void *arg)
{
    (void)arg;
    while (!atomic_load(&waiting))
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* the waiter is parked (if not, the jump comes sooner) */
    if (atomic_load(&how) == 0)
        CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    else
        CHECK_EQ(cap_thread_kill(waiter_thread, SIGUSR2), 0);
    return NULL;
}

/* Waits in sigwait for set until the handler jumps out of it. */
static __attribute__((noinline)) void wait_until_jump(const sigset_t *set)
{
    if (sigsetjmp(env, 1) != 0)
        return;
    atomic_store(&waiting, 1);
    int sig = 0;
    sigwait(set, &sig);
    CHECK(!"sigwait returned instead of being left by the jump");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
    waiter_thread = cap_thread_self();
    alarm(30); /* a spinning wait ends the program (the test fails) */

    for (int round = 0; round < 2; round++) {
        atomic_store(&how, round);
        atomic_store(&waiting, 0);
        cap_thread_t t = spawn(sender, NULL);
        wait_until_jump(&set);
        CHECK_EQ(jumps, round + 1);
        join(t);
        sigset_t now;
        CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
        CHECK_EQ(sigismember(&now, SIGUSR1), 1);
        CHECK_EQ(sigismember(&now, SIGUSR2), 0);
    }

    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    int sig = 0;
    CHECK_EQ(sigwait(&set, &sig), 0);
    CHECK_EQ(sig, SIGUSR1);
    alarm(0);
    return 0;
}

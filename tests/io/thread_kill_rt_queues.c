/* SPDX-License-Identifier: MIT */
/* Description: real-time signals sent to a thread queue, as POSIX wants
 * (standard ones do not):
 *  - SIGRTMIN sent five times with pthread_kill while the thread blocks
 *    it runs its handler five times once the thread unblocks it; SIGUSR1
 *    sent five times runs once;
 *  - sigwait takes three instances one at a time, and then sigtimedwait
 *    finds none (EAGAIN), and sigpending shows the signal only while some
 *    are left;
 *  - 255 instances can wait; the 256th send fails with EAGAIN, and the
 *    handler then runs 255 times;
 *  - four threads sending 2,000 instances each to a thread that keeps
 *    unblocking and blocking the signal (deliveries race with sends):
 *    the handler runs exactly once per send that succeeded. */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "io/io_util.h"

static atomic_int rt_runs, usr1_runs, ready, go;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    atomic_fetch_add(&rt_runs, 1);
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1_runs, 1);
}

static void block(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
}

static void unblock(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
}

/* Blocks sig and SIGUSR1, says so, waits for go, unblocks them. */
static void *blocker(void *arg)
{
    int sig = (int)(intptr_t)arg;
    block(sig);
    block(SIGUSR1);
    atomic_store(&ready, 1);
    while (!atomic_load(&go))
        cap_yield();
    unblock(sig);
    unblock(SIGUSR1);
    return NULL;
}

static cap_thread_t start_blocker(int sig)
{
    atomic_store(&ready, 0);
    atomic_store(&go, 0);
    cap_thread_t t = spawn(blocker, (void *)(intptr_t)sig);
    while (!atomic_load(&ready))
        cap_yield();
    return t;
}

static void queued_while_blocked(void)
{
    atomic_store(&rt_runs, 0);
    atomic_store(&usr1_runs, 0);
    cap_thread_t t = start_blocker(SIGRTMIN);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(cap_thread_kill(t, SIGRTMIN), 0);
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    }
    CHECK_EQ(atomic_load(&rt_runs), 0);
    atomic_store(&go, 1);
    join(t);
    CHECK_EQ(atomic_load(&rt_runs), 5);
    CHECK_EQ(atomic_load(&usr1_runs), 1);
}

static atomic_int sent;

static void *waiter(void *arg)
{
    (void)arg;
    int sig = SIGRTMIN + 1;
    block(sig);
    atomic_store(&ready, 1);
    while (atomic_load(&sent) < 3)
        cap_yield();
    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, sig);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(sigpending(&pend), 0);
        CHECK(sigismember(&pend, sig));
        int got = 0;
        CHECK_EQ(sigwait(&set, &got), 0);
        CHECK_EQ(got, sig);
    }
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(!sigismember(&pend, sig));
    struct timespec zero = { 0, 0 };
    errno = 0;
    CHECK_EQ(sigtimedwait(&set, NULL, &zero), -1);
    CHECK_EQ(errno, EAGAIN);
    return NULL;
}

static void taken_one_at_a_time(void)
{
    atomic_store(&ready, 0);
    atomic_store(&sent, 0);
    cap_thread_t t = spawn(waiter, NULL);
    while (!atomic_load(&ready))
        cap_yield();
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cap_thread_kill(t, SIGRTMIN + 1), 0);
    atomic_store(&sent, 3);
    join(t);
}

static void queue_limit(void)
{
    atomic_store(&rt_runs, 0);
    cap_thread_t t = start_blocker(SIGRTMIN);
    for (int i = 0; i < 255; i++)
        CHECK_EQ(cap_thread_kill(t, SIGRTMIN), 0);
    CHECK_EQ(cap_thread_kill(t, SIGRTMIN), EAGAIN);
    atomic_store(&go, 1);
    join(t);
    CHECK_EQ(atomic_load(&rt_runs), 255);
}

/* ---- senders racing with deliveries ------------------------------------- */

enum { SENDERS = 4, SENDS = 2000 };
static atomic_int stress_runs, accepted, senders_done;
static cap_thread_t stress_target;

static void on_stress(int sig)
{
    (void)sig;
    atomic_fetch_add(&stress_runs, 1);
}

static void *flapper(void *arg)
{
    (void)arg;
    int sig = SIGRTMIN + 2;
    while (atomic_load(&senders_done) < SENDERS) {
        block(sig);
        cap_yield();
        unblock(sig); /* delivers what is queued */
        cap_yield();
    }
    return NULL;
}

static void *sender(void *arg)
{
    (void)arg;
    for (int i = 0; i < SENDS; i++) {
        int rc = cap_thread_kill(stress_target, SIGRTMIN + 2);
        CHECK(rc == 0 || rc == EAGAIN);
        if (rc == 0)
            atomic_fetch_add(&accepted, 1);
        if (i % 16 == 0)
            cap_yield();
    }
    atomic_fetch_add(&senders_done, 1);
    return NULL;
}

static void senders_race_deliveries(void)
{
    install_handler(SIGRTMIN + 2, on_stress, SA_RESTART);
    stress_target = spawn(flapper, NULL);
    cap_thread_t s[SENDERS];
    for (int i = 0; i < SENDERS; i++)
        s[i] = spawn(sender, NULL);
    for (int i = 0; i < SENDERS; i++)
        join(s[i]);
    join(stress_target); /* its last unblock delivered what was left */
    CHECK_GT(atomic_load(&accepted), 0);
    CHECK_EQ(atomic_load(&stress_runs), atomic_load(&accepted));
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_rt;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGRTMIN, &sa, NULL), 0);
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    queued_while_blocked();
    taken_one_at_a_time();
    queue_limit();
    senders_race_deliveries();
    return 0;
}

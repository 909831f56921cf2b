/* SPDX-License-Identifier: MIT */
/* Description: GNU's thread attribute signal mask
 * (pthread_attr_setsigmask_np), as glibc has it.
 *  - An attribute without one says PTHREAD_ATTR_NO_SIGMASK_NP and an
 *    empty set; with one, 0 and that set; a NULL set removes it again.
 *  - A thread created with one starts with exactly that mask, not its
 *    creator's; without one, with its creator's.
 *  - Delivery follows the masks: a handler of a signal sent to the
 *    process never runs on a thread whose attribute (or own call) blocks
 *    it. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "check.h"

static pthread_t main_thread, blocker;
static atomic_int usr1_runs, usr2_runs, on_blocking_thread;

/* A handler never runs on a thread that blocks its signal: SIGUSR1 is
 * blocked by `blocker` (its attribute), SIGUSR2 by it and by main. */
static void on_usr1(int sig)
{
    (void)sig;
    if (pthread_equal(pthread_self(), blocker))
        atomic_fetch_add(&on_blocking_thread, 1);
    atomic_fetch_add(&usr1_runs, 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    if (pthread_equal(pthread_self(), blocker) || pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add(&on_blocking_thread, 1);
    atomic_fetch_add(&usr2_runs, 1);
}

static atomic_bool stop;

static sigset_t seen;

static void *report_mask(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, NULL, &seen), 0);
    return NULL;
}

/* Waits until told (its mask is its attribute's). */
static void *busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        sleep_ms(1);
    return NULL;
}

static bool same_for(const sigset_t *a, const sigset_t *b)
{
    for (int sig = 1; sig < 32; sig++) /* the standard signals */
        if (sigismember(a, sig) != sigismember(b, sig))
            return false;
    return true;
}

int main(void)
{
    main_thread = pthread_self();
    pthread_attr_t a;
    EXPECT_EQ(pthread_attr_init(&a), 0);
    sigset_t set, got;
    EXPECT_EQ(pthread_attr_getsigmask_np(&a, &got), PTHREAD_ATTR_NO_SIGMASK_NP);
    sigemptyset(&set);
    EXPECT(same_for(&got, &set));

    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGTERM);
    EXPECT_EQ(pthread_attr_setsigmask_np(&a, &set), 0);
    EXPECT_EQ(pthread_attr_getsigmask_np(&a, &got), 0);
    EXPECT(same_for(&got, &set));

    /* Main blocks SIGHUP; the attribute's thread does not. */
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &hup, NULL), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, &a, report_mask, NULL), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT(sigismember(&seen, SIGUSR1));
    EXPECT(sigismember(&seen, SIGTERM));
    EXPECT(!sigismember(&seen, SIGHUP));
    EXPECT(same_for(&seen, &set));

    /* Removed: the creator's mask again. */
    EXPECT_EQ(pthread_attr_setsigmask_np(&a, NULL), 0);
    EXPECT_EQ(pthread_attr_getsigmask_np(&a, &got), PTHREAD_ATTR_NO_SIGMASK_NP);
    EXPECT_EQ(pthread_create(&t, &a, report_mask, NULL), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT(sigismember(&seen, SIGHUP));
    EXPECT(!sigismember(&seen, SIGUSR1));
    EXPECT_EQ(pthread_sigmask(SIG_UNBLOCK, &hup, NULL), 0);

    /* Delivery: `blocker` blocks both signals by its attribute, main
     * blocks SIGUSR2, a third thread blocks neither. */
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    EXPECT_EQ(pthread_attr_setsigmask_np(&a, &both), 0);
    EXPECT_EQ(pthread_create(&blocker, &a, busy, NULL), 0);
    sigset_t none;
    sigemptyset(&none);
    EXPECT_EQ(pthread_attr_setsigmask_np(&a, &none), 0);
    pthread_t taker;
    EXPECT_EQ(pthread_create(&taker, &a, busy, NULL), 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
    for (int i = 0; i < 20; i++) {
        EXPECT_EQ(kill(getpid(), SIGUSR1), 0);
        while (atomic_load(&usr1_runs) < i + 1)
            sleep_ms(1);
        EXPECT_EQ(kill(getpid(), SIGUSR2), 0);
        while (atomic_load(&usr2_runs) < i + 1)
            sleep_ms(1);
    }
    EXPECT_EQ(atomic_load(&on_blocking_thread), 0);
    atomic_store(&stop, true);
    EXPECT_EQ(pthread_join(blocker, NULL), 0);
    EXPECT_EQ(pthread_join(taker, NULL), 0);
    EXPECT_EQ(pthread_attr_destroy(&a), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: kill() and sigqueue() of the caller's own process, from a
 * thread that is the only one accepting the signal, run its handler in
 * that thread before they return (POSIX, kill: "at least one pending
 * unblocked signal shall be delivered to the sending thread before kill()
 * returns"). Main and every other thread block SIGUSR1; the sender, on
 * another worker than main's kernel thread when there are two (Linux hands
 * a process's signal to its first kernel thread when that one takes it,
 * and the old library then routed it to the sender later: the count below
 * was still 0 as kill returned), unblocks it and sends it many times.
 * Each send:
 * the handler ran once more, in the sender, with the sender's siginfo
 * (SI_USER from this process for kill; SI_QUEUE with the value for
 * sigqueue). A signal the sender blocks stays the process's (pending) and
 * its handler runs as the sender unblocks it, before pthread_sigmask
 * returns. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "io/io_util.h"

enum { ROUNDS = 500, BURST = 16 };

static atomic_int runs;
static cap_thread_t ran_in;
static atomic_int last_code, last_pid, last_value;

static void on_usr1(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)uctx;
    ran_in = cap_thread_self();
    atomic_store(&last_code, info->si_code);
    atomic_store(&last_pid, info->si_pid);
    atomic_store(&last_value, info->si_code == SI_QUEUE ? info->si_value.sival_int : -1);
    atomic_fetch_add(&runs, 1);
}

static atomic_int decided, claimed, sender_unblocked, main_applied, sender_done;
static int main_worker;

static void send_rounds(void)
{
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < ROUNDS; i++) {
        int before = atomic_load(&runs);
        if (i % 2 == 0) {
            CHECK_EQ(kill(getpid(), SIGUSR1), 0);
            CHECK_EQ(atomic_load(&runs), before + 1);
            CHECK_EQ(atomic_load(&last_code), SI_USER);
            CHECK_EQ(atomic_load(&last_value), -1);
        } else {
            CHECK_EQ(sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = i }), 0);
            CHECK_EQ(atomic_load(&runs), before + 1);
            CHECK_EQ(atomic_load(&last_code), SI_QUEUE);
            CHECK_EQ(atomic_load(&last_value), i);
        }
        CHECK_EQ(atomic_load(&last_pid), getpid());
        CHECK(cap_thread_equal(ran_in, self));
    }
}

/* One of a burst: the first that runs on another worker than main's (any,
 * with one worker) sends. */
static void *sender(void *arg)
{
    (void)arg;
    int expected = 0;
    bool plays = (cap_worker_count() == 1 || cap_worker_id() != main_worker) &&
                 atomic_compare_exchange_strong(&claimed, &expected, 1);
    atomic_fetch_add(&decided, 1);
    if (!plays)
        return NULL;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    /* Main's kernel thread takes up the mask that lets SIGUSR1 through
     * (a worker takes a mask that blocks less lazily, and until then the
     * kernel skipped it for the sender's). */
    atomic_store(&sender_unblocked, 1);
    while (!atomic_load(&main_applied))
        cap_sleep_ns(100000);
    send_rounds();

    /* Blocked by the sender too: the process's, pending, delivered to the
     * sender as it unblocks it. */
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    int before = atomic_load(&runs);
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    CHECK_EQ(atomic_load(&runs), before);
    sigset_t pending;
    CHECK_EQ(sigpending(&pending), 0);
    CHECK_EQ(sigismember(&pending, SIGUSR1), 1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    CHECK_EQ(atomic_load(&runs), before + 1);
    CHECK(cap_thread_equal(ran_in, cap_thread_self()));
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    atomic_store(&sender_done, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    main_worker = cap_worker_id();

    for (int round = 0; !atomic_load(&claimed); round++) {
        CHECK(round < 100); /* a burst always reaches the other worker */
        cap_thread_t t[BURST];
        for (int i = 0; i < BURST; i++)
            t[i] = spawn(sender, NULL);
        /* Busy, so that the other worker takes some of them. */
        while (atomic_load(&decided) < (round + 1) * BURST)
            cap_yield();
        if (atomic_load(&claimed)) {
            while (!atomic_load(&sender_unblocked))
                cap_sleep_ns(100000);
            /* Any change of main's mask installs the latest workers' mask
             * on its kernel thread. */
            sigset_t usr2;
            sigemptyset(&usr2);
            sigaddset(&usr2, SIGUSR2);
            CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
            CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL), 0);
            atomic_store(&main_applied, 1);
        }
        for (int i = 0; i < BURST; i++)
            join(t[i]);
    }
    CHECK_EQ(atomic_load(&sender_done), 1);
    CHECK_EQ(atomic_load(&runs), ROUNDS + 1);
    return 0;
}

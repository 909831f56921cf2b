/* SPDX-License-Identifier: MIT */
/* Description: threads keep blocking and unblocking a real-time signal
 * and queue it to the process with a value each (sigqueue), while two
 * others take it with sigtimedwait: every instance is handled or taken
 * exactly once, with its own value (the sender's siginfo, also when the
 * runtime moved it away from a thread that blocked it), and never
 * handled in a thread while that thread blocks it.
 * Some instances find every thread blocking them (the kernel keeps them)
 * and some are moved after the thread that would take them blocked them
 * too (the runtime keeps them): a thread's unblocking takes both. */
#include <signal.h>
#include <stdbool.h>

#include "io/io_util.h"

enum { THREADS = 6, WAITERS = 2, PER_THREAD = 300, TOTAL = THREADS * PER_THREAD, OUTSTANDING = 8 };

static int sig;
static cap_thread_t who[THREADS];
static cap_thread_t waiter_who[WAITERS]; /* they block it throughout */
static atomic_int blocking[THREADS]; /* set once blocked, cleared before unblocking */
static atomic_int seen[TOTAL];
static atomic_int handled, sent, wrong_thread, bad_value;

static void on_sig(int s, siginfo_t *info, void *uctx)
{
    (void)s;
    (void)uctx;
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < THREADS; i++)
        if (cap_thread_equal(who[i], self) && atomic_load(&blocking[i]))
            atomic_fetch_add(&wrong_thread, 1);
    for (int i = 0; i < WAITERS; i++)
        if (cap_thread_equal(waiter_who[i], self))
            atomic_fetch_add(&wrong_thread, 1);
    int v = info->si_code == SI_QUEUE ? info->si_value.sival_int : -1;
    if (v < 0 || v >= TOTAL || info->si_pid != getpid())
        atomic_fetch_add(&bad_value, 1);
    else
        atomic_fetch_add(&seen[v], 1);
    atomic_fetch_add(&handled, 1);
}

/* Takes instances with sigtimedwait, blocking the signal throughout:
 * the runtime may hand it kept instances (io/sigroute.h). */
static atomic_int waiting_stop;
static void *waiter(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    struct timespec tick = { 0, 2000000 };
    while (!atomic_load(&waiting_stop)) {
        siginfo_t info;
        int r = sigtimedwait(&s, &info, &tick);
        if (r < 0) {
            CHECK(errno == EAGAIN || errno == EINTR);
            continue;
        }
        CHECK_EQ(r, sig);
        int v = info.si_code == SI_QUEUE ? info.si_value.sival_int : -1;
        if (v < 0 || v >= TOTAL || info.si_pid != getpid())
            atomic_fetch_add(&bad_value, 1);
        else
            atomic_fetch_add(&seen[v], 1);
        atomic_fetch_add(&handled, 1);
    }
    return NULL;
}

static void set_blocked(long id, bool on)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    if (!on)
        atomic_store(&blocking[id], 0);
    CHECK_EQ(pthread_sigmask(on ? SIG_BLOCK : SIG_UNBLOCK, &s, NULL), 0);
    if (on)
        atomic_store(&blocking[id], 1);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    atomic_store(&blocking[id], 1);
    set_blocked(id, false); /* inherited main's mask, which blocks it */
    unsigned seed = (unsigned)id * 2654435761u;
    for (int i = 0; i < PER_THREAD; i++) {
        seed = seed * 1103515245u + 12345u;
        bool block_it = (seed >> 16) % 3 != 0;
        if (block_it)
            set_blocked(id, true);
        while (atomic_load(&sent) - atomic_load(&handled) >= OUTSTANDING)
            cap_sleep_ns(100000);
        union sigval v = { .sival_int = atomic_fetch_add(&sent, 1) };
        CHECK_EQ(sigqueue(getpid(), sig, v), 0);
        if ((seed >> 20) % 4 == 0)
            cap_sleep_ns(50000);
        else
            cap_yield();
        if (block_it)
            set_blocked(id, false);
    }
    return NULL;
}

int main(void)
{
    sig = SIGRTMIN;
    struct sigaction sa = { .sa_sigaction = on_sig, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(sig, &sa, NULL), 0);
    /* Main blocks it throughout, so that at times nobody accepts it. */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    cap_thread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) {
        t[i] = spawn(worker, (void *)i);
        who[i] = t[i];
    }
    cap_thread_t w[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        waiter_who[i] = w[i] = spawn(waiter, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    atomic_store(&waiting_stop, 1);
    for (int i = 0; i < WAITERS; i++)
        join(w[i]);
    /* Every thread gone but main, which blocks it: what is left is
     * pending for the process; main's unblocking takes it all. */
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    while (atomic_load(&handled) < TOTAL)
        cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&handled), TOTAL);
    CHECK_EQ(atomic_load(&wrong_thread), 0);
    CHECK_EQ(atomic_load(&bad_value), 0);
    for (int i = 0; i < TOTAL; i++)
        CHECK_EQ(atomic_load(&seen[i]), 1);
    return 0;
}

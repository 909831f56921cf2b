/* SPDX-License-Identifier: MIT */
/* Description: pthread_sigqueue delivers its value to the thread it names,
 * as on NPTL:
 *  - a handler (SA_SIGINFO) there sees si_code SI_QUEUE, this process's
 *    pid and uid and the value, once the thread unblocks the signal; one
 *    sent to the calling thread itself runs before the call returns;
 *  - twenty values of a real-time signal queued while it is blocked
 *    arrive in the order sent, through the handler and through
 *    sigwaitinfo/sigtimedwait, and then none is left (EAGAIN);
 *  - a signalfd read reports SI_QUEUE and the value;
 *  - values of two signals sent in turns, the second's taken, then more
 *    of the first: the first's still arrive in the order sent;
 *  - sent from a handler: to another thread, and to the handler's own
 *    (run at once, nested);
 *  - two values of a standard signal make one instance with the first
 *    value; a later pthread_kill's instance has no value;
 *  - nothing is kept for sends that leave no signal pending (an ignored
 *    signal, a signal ignored by the time it is delivered), for values
 *    delivered, nor for a thread that ends with values pending: a
 *    thousand of each, and the sends still succeed;
 *  - four senders racing with a thread that keeps blocking and
 *    unblocking the signal: every value accepted arrives exactly once,
 *    each sender's in the order it sent them. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void set_mask(int how, int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    EXPECT_EQ(pthread_sigmask(how, &set, NULL), 0);
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *))
{
    install_action(sig, fn);
}

static void ignore(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    EXPECT_EQ(sigaction(sig, &sa, NULL), 0);
}

static union sigval val(int v)
{
    union sigval sv;
    memset(&sv, 0, sizeof sv);
    sv.sival_int = v;
    return sv;
}

/* ---- what the handler saw ------------------------------------------------ */

enum { LOG_MAX = 64 };
static int seen_values[LOG_MAX];
static atomic_int seen; /* handler runs */
static atomic_int bad_info; /* runs whose siginfo was not a sigqueue of ours */

static void on_value(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si->si_code != SI_QUEUE || si->si_pid != getpid() || si->si_uid != getuid())
        atomic_fetch_add(&bad_info, 1);
    int n = atomic_fetch_add(&seen, 1);
    if (n < LOG_MAX)
        seen_values[n] = si->si_value.sival_int;
}

static void reset_log(void)
{
    atomic_store(&seen, 0);
    atomic_store(&bad_info, 0);
}

/* ---- a thread that blocks sig until told to go on ------------------------- */

struct blocker {
    int sig;
    atomic_int ready, go;
    pthread_t id;
};

static void *blocker_run(void *arg)
{
    struct blocker *b = arg;
    set_mask(SIG_BLOCK, b->sig);
    atomic_store(&b->ready, 1);
    while (!atomic_load(&b->go))
        sched_yield();
    set_mask(SIG_UNBLOCK, b->sig); /* delivers what is queued */
    return NULL;
}

static void start_blocker(struct blocker *b, int sig)
{
    b->sig = sig;
    atomic_store(&b->ready, 0);
    atomic_store(&b->go, 0);
    EXPECT_EQ(pthread_create(&b->id, NULL, blocker_run, b), 0);
    while (!atomic_load(&b->ready))
        sched_yield();
}

static void finish_blocker(struct blocker *b)
{
    atomic_store(&b->go, 1);
    EXPECT_EQ(pthread_join(b->id, NULL), 0);
}

static void handler_sees_values_in_order(void)
{
    int sig = SIGRTMIN;
    install(sig, on_value);
    reset_log();
    struct blocker b;
    start_blocker(&b, sig);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(pthread_sigqueue(b.id, sig, val(100 + i)), 0);
    EXPECT_EQ(atomic_load(&seen), 0);
    finish_blocker(&b);
    EXPECT_EQ(atomic_load(&seen), 20);
    EXPECT_EQ(atomic_load(&bad_info), 0);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(seen_values[i], 100 + i);
}

static void sent_to_self_runs_before_return(void)
{
    int sig = SIGRTMIN + 1;
    install(sig, on_value);
    reset_log();
    EXPECT_EQ(pthread_sigqueue(pthread_self(), sig, val(7)), 0);
    EXPECT_EQ(atomic_load(&seen), 1);
    EXPECT_EQ(seen_values[0], 7);
    EXPECT_EQ(atomic_load(&bad_info), 0);
}

/* ---- taken by sigwaitinfo and by a signalfd ----------------------------- */

struct waiter {
    int sig;
    atomic_int ready, sent;
};

static void *waiter_run(void *arg)
{
    struct waiter *w = arg;
    set_mask(SIG_BLOCK, w->sig);
    atomic_store(&w->ready, 1);
    while (!atomic_load(&w->sent))
        sched_yield();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, w->sig);
    for (int i = 0; i < 20; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        struct timespec ts = { 5, 0 };
        int got = i % 2 == 0 ? sigwaitinfo(&set, &si) : sigtimedwait(&set, &si, &ts);
        EXPECT_EQ(got, w->sig);
        EXPECT_EQ(si.si_signo, w->sig);
        EXPECT_EQ(si.si_code, SI_QUEUE);
        EXPECT_EQ(si.si_pid, getpid());
        EXPECT_EQ(si.si_value.sival_int, 200 + i);
    }
    struct timespec zero = { 0, 0 };
    errno = 0;
    EXPECT_EQ(sigtimedwait(&set, NULL, &zero), -1);
    EXPECT_EQ(errno, EAGAIN);

    /* Through a signalfd of the signal. */
    int fd = signalfd(-1, &set, SFD_CLOEXEC);
    EXPECT(fd >= 0);
    atomic_store(&w->ready, 2);
    while (atomic_load(&w->sent) < 2)
        sched_yield();
    for (int i = 0; i < 3; i++) {
        struct signalfd_siginfo rec;
        EXPECT_EQ(read(fd, &rec, sizeof rec), (ssize_t)sizeof rec);
        EXPECT_EQ((int)rec.ssi_signo, w->sig);
        EXPECT_EQ(rec.ssi_code, SI_QUEUE);
        EXPECT_EQ((pid_t)rec.ssi_pid, getpid());
        EXPECT_EQ(rec.ssi_int, 300 + i);
    }
    EXPECT_EQ(close(fd), 0);
    return NULL;
}

static void taken_with_their_values(void)
{
    struct waiter w = { .sig = SIGRTMIN + 2 };
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, waiter_run, &w), 0);
    while (atomic_load(&w.ready) < 1)
        sched_yield();
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(pthread_sigqueue(t, w.sig, val(200 + i)), 0);
    atomic_store(&w.sent, 1);
    while (atomic_load(&w.ready) < 2)
        sched_yield();
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(pthread_sigqueue(t, w.sig, val(300 + i)), 0);
    atomic_store(&w.sent, 2);
    EXPECT_EQ(pthread_join(t, NULL), 0);
}

/* Values of two signals sent in turns; those of the second taken, then
 * more of the first sent: the first's arrive in the order sent (where
 * the library keeps a value has nothing to do with when it was sent). */
struct two {
    int a, b;
    atomic_int phase;
};

static void take_values(int sig, int from, int count)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    for (int i = 0; i < count; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        EXPECT_EQ(sigwaitinfo(&set, &si), sig);
        EXPECT_EQ(si.si_value.sival_int, from + i);
    }
}

static void *two_run(void *arg)
{
    struct two *w = arg;
    set_mask(SIG_BLOCK, w->a);
    set_mask(SIG_BLOCK, w->b);
    atomic_store(&w->phase, 1);
    while (atomic_load(&w->phase) != 2)
        sched_yield();
    take_values(w->b, 1000, 10);
    atomic_store(&w->phase, 3);
    while (atomic_load(&w->phase) != 4)
        sched_yield();
    take_values(w->a, 0, 20);
    return NULL;
}

static void order_kept_across_signals(void)
{
    struct two w = { .a = SIGRTMIN + 8, .b = SIGRTMIN + 9 };
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, two_run, &w), 0);
    while (atomic_load(&w.phase) != 1)
        sched_yield();
    for (int i = 0; i < 10; i++) {
        EXPECT_EQ(pthread_sigqueue(t, w.a, val(i)), 0);
        EXPECT_EQ(pthread_sigqueue(t, w.b, val(1000 + i)), 0);
    }
    atomic_store(&w.phase, 2);
    while (atomic_load(&w.phase) != 3)
        sched_yield();
    for (int i = 10; i < 20; i++)
        EXPECT_EQ(pthread_sigqueue(t, w.a, val(i)), 0);
    atomic_store(&w.phase, 4);
    EXPECT_EQ(pthread_join(t, NULL), 0);
}

/* ---- sent from a handler ---------------------------------------------------- */

static pthread_t relay_target;

/* SIGUSR1's handler: a value to another thread, and one to itself. */
static void relay(int sig)
{
    (void)sig;
    EXPECT_EQ(pthread_sigqueue(relay_target, SIGRTMIN + 10, val(42)), 0);
    EXPECT_EQ(pthread_sigqueue(pthread_self(), SIGRTMIN + 11, val(43)), 0);
}

static atomic_int relay_phase;

static void *relay_run(void *arg)
{
    (void)arg;
    set_mask(SIG_BLOCK, SIGRTMIN + 10);
    atomic_store(&relay_phase, 1);
    while (atomic_load(&relay_phase) != 2)
        sched_yield();
    take_values(SIGRTMIN + 10, 42, 1);
    return NULL;
}

static void sent_from_handler(void)
{
    install_handler(SIGUSR1, relay, SA_RESTART);
    install(SIGRTMIN + 11, on_value);
    reset_log();
    EXPECT_EQ(pthread_create(&relay_target, NULL, relay_run, NULL), 0);
    while (atomic_load(&relay_phase) != 1)
        sched_yield();
    EXPECT_EQ(raise(SIGUSR1), 0);
    /* The one to itself ran nested, in the handler's thread. */
    EXPECT_EQ(atomic_load(&seen), 1);
    EXPECT_EQ(seen_values[0], 43);
    EXPECT_EQ(atomic_load(&bad_info), 0);
    atomic_store(&relay_phase, 2);
    EXPECT_EQ(pthread_join(relay_target, NULL), 0);
}

/* ---- a standard signal keeps one instance, the first one's --------------- */

struct standard {
    atomic_int ready, sent;
};

static void *standard_run(void *arg)
{
    struct standard *s = arg;
    set_mask(SIG_BLOCK, SIGUSR2);
    atomic_store(&s->ready, 1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    struct timespec zero = { 0, 0 };
    for (int round = 1; round <= 2; round++) {
        while (atomic_load(&s->sent) < round)
            sched_yield();
        siginfo_t si;
        memset(&si, 0, sizeof si);
        EXPECT_EQ(sigwaitinfo(&set, &si), SIGUSR2);
        if (round == 1) {
            EXPECT_EQ(si.si_code, SI_QUEUE);
            EXPECT_EQ(si.si_value.sival_int, 1);
        } else {
            /* pthread_kill's (a tgkill: SI_TKILL, which glibc's
             * sigwaitinfo reports as SI_USER) */
            EXPECT_EQ(si.si_code, SI_USER);
        }
        errno = 0;
        EXPECT_EQ(sigtimedwait(&set, NULL, &zero), -1);
        EXPECT_EQ(errno, EAGAIN);
        atomic_store(&s->ready, round + 1);
    }
    return NULL;
}

static void standard_signal_keeps_first(void)
{
    struct standard s = { 0 };
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, standard_run, &s), 0);
    while (atomic_load(&s.ready) < 1)
        sched_yield();
    EXPECT_EQ(pthread_sigqueue(t, SIGUSR2, val(1)), 0);
    EXPECT_EQ(pthread_sigqueue(t, SIGUSR2, val(2)), 0);
    atomic_store(&s.sent, 1);
    while (atomic_load(&s.ready) < 2)
        sched_yield();
    EXPECT_EQ(pthread_kill(t, SIGUSR2), 0);
    atomic_store(&s.sent, 2);
    EXPECT_EQ(pthread_join(t, NULL), 0);
}

/* ---- sends that leave nothing behind ------------------------------------- */

enum { MANY = 1000 };

/* Blocks sig, then unblocks it when told, MANY / 100 times. */
struct cycler {
    int sig;
    atomic_int blocked, go, unblocked; /* rounds done */
};

static void *cycler_run(void *arg)
{
    struct cycler *c = arg;
    for (int round = 1; round <= MANY / 100; round++) {
        set_mask(SIG_BLOCK, c->sig);
        atomic_store(&c->blocked, round);
        while (atomic_load(&c->go) != round)
            sched_yield();
        set_mask(SIG_UNBLOCK, c->sig);
        atomic_store(&c->unblocked, round);
    }
    return NULL;
}

static void nothing_kept_for_dropped_sends(void)
{
    int sig = SIGRTMIN + 3;
    ignore(sig);
    for (int i = 0; i < MANY; i++)
        EXPECT_EQ(pthread_sigqueue(pthread_self(), sig, val(i)), 0);

    /* Queued while blocked, ignored by the time the thread unblocks it:
     * one thread for every round (its end would drop what it kept). */
    struct cycler c = { .sig = SIGRTMIN + 4 };
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, cycler_run, &c), 0);
    for (int round = 1; round <= MANY / 100; round++) {
        install(c.sig, on_value);
        reset_log();
        while (atomic_load(&c.blocked) != round)
            sched_yield();
        for (int i = 0; i < 100; i++)
            EXPECT_EQ(pthread_sigqueue(t, c.sig, val(i)), 0);
        ignore(c.sig);
        atomic_store(&c.go, round);
        while (atomic_load(&c.unblocked) != round)
            sched_yield();
        EXPECT_EQ(atomic_load(&seen), 0);
    }
    EXPECT_EQ(pthread_join(t, NULL), 0);

    /* Delivered: each value's record goes with its delivery. */
    int sig3 = SIGRTMIN + 5;
    install(sig3, on_value);
    reset_log();
    for (int round = 0; round < MANY / 100; round++) {
        struct blocker b;
        start_blocker(&b, sig3);
        for (int i = 0; i < 100; i++)
            EXPECT_EQ(pthread_sigqueue(b.id, sig3, val(i)), 0);
        finish_blocker(&b);
    }
    EXPECT_EQ(atomic_load(&seen), MANY);
    EXPECT_EQ(atomic_load(&bad_info), 0);
}

/* A thread that blocks sig and returns with it pending. */
static atomic_int ender_ready;

static void *ender_run(void *arg)
{
    int sig = (int)(intptr_t)arg;
    set_mask(SIG_BLOCK, sig);
    atomic_store(&ender_ready, 1);
    while (atomic_load(&ender_ready) != 2)
        sched_yield();
    return NULL;
}

static void nothing_kept_for_ended_threads(void)
{
    int sig = SIGRTMIN + 6;
    install(sig, on_value);
    reset_log();
    for (int round = 0; round < MANY / 100; round++) {
        atomic_store(&ender_ready, 0);
        pthread_t t;
        EXPECT_EQ(pthread_create(&t, NULL, ender_run, (void *)(intptr_t)sig), 0);
        while (atomic_load(&ender_ready) != 1)
            sched_yield();
        for (int i = 0; i < 100; i++)
            EXPECT_EQ(pthread_sigqueue(t, sig, val(i)), 0);
        atomic_store(&ender_ready, 2);
        EXPECT_EQ(pthread_join(t, NULL), 0);
    }
    EXPECT_EQ(atomic_load(&seen), 0);
}

/* ---- senders racing with deliveries ------------------------------------- */

enum { SENDERS = 4, SENDS = 1500 };
static atomic_int accepted, received, out_of_order, senders_done;
static int last_from[SENDERS]; /* written by the target's handler only */
static pthread_t stress_target;

static void on_stress(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    int v = si->si_value.sival_int;
    int from = v >> 16, i = v & 0xffff;
    if (si->si_code != SI_QUEUE || from < 0 || from >= SENDERS || i <= last_from[from])
        atomic_fetch_add(&out_of_order, 1);
    else
        last_from[from] = i;
    atomic_fetch_add(&received, 1);
}

static void *flapper(void *arg)
{
    int sig = (int)(intptr_t)arg;
    while (atomic_load(&senders_done) < SENDERS) {
        set_mask(SIG_BLOCK, sig);
        sched_yield();
        set_mask(SIG_UNBLOCK, sig);
        sched_yield();
    }
    return NULL;
}

static void *sender(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 1; i <= SENDS; i++) {
        int rc = pthread_sigqueue(stress_target, SIGRTMIN + 7, val(me << 16 | i));
        EXPECT(rc == 0 || rc == EAGAIN);
        if (rc == 0)
            atomic_fetch_add(&accepted, 1);
        if (i % 16 == 0)
            sched_yield();
    }
    atomic_fetch_add(&senders_done, 1);
    return NULL;
}

static void senders_race_deliveries(void)
{
    int sig = SIGRTMIN + 7;
    install(sig, on_stress);
    EXPECT_EQ(pthread_create(&stress_target, NULL, flapper, (void *)(intptr_t)sig), 0);
    pthread_t s[SENDERS];
    for (int i = 0; i < SENDERS; i++)
        EXPECT_EQ(pthread_create(&s[i], NULL, sender, (void *)(intptr_t)i), 0);
    for (int i = 0; i < SENDERS; i++)
        EXPECT_EQ(pthread_join(s[i], NULL), 0);
    EXPECT_EQ(pthread_join(stress_target, NULL), 0); /* its last unblock delivered the rest */
    EXPECT(atomic_load(&accepted) > 0);
    EXPECT_EQ(atomic_load(&received), atomic_load(&accepted));
    EXPECT_EQ(atomic_load(&out_of_order), 0);
}

int main(void)
{
    handler_sees_values_in_order();
    sent_to_self_runs_before_return();
    taken_with_their_values();
    order_kept_across_signals();
    sent_from_handler();
    standard_signal_keeps_first();
    nothing_kept_for_dropped_sends();
    nothing_kept_for_ended_threads();
    senders_race_deliveries();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: many threads change their masks at once (blocking and
 * unblocking two signals, and waiting in ppoll with a mask of their own)
 * while another thread keeps sending one of them to the process, and
 * threads come and go with the masks they inherit: no deadlock among the
 * changes that wait for the other workers, and afterwards the workers'
 * mask is right again: main, alone, blocks the signal and it stays
 * pending; it unblocks it and the handler runs once before the call
 * returns. A miscounted class would leave the signal blocked for good or
 * let it through. */
#include <signal.h>

#include "io/io_util.h"

enum { THREADS = 12, ITERS = 300, FEW = 2, FEW_ITERS = 3000 };

static int iters = ITERS;

static volatile sig_atomic_t handled;
static atomic_int done;

static void on_sig(int sig)
{
    (void)sig;
    handled++;
}

static sigset_t both(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    return s;
}

static void *child(void *arg)
{
    (void)arg;
    sigset_t s;
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &s), 0);
    CHECK_EQ(sigismember(&s, SIGUSR2), 1); /* inherited */
    return NULL;
}

static void *changer(void *arg)
{
    long id = (long)arg;
    sigset_t s = both(), cur;
    for (int i = 0; i < iters; i++) {
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
        CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
        if ((i + id) % 7 == 0)
            join(spawn(child, NULL));
        cap_yield();
        if ((i + id) % 5 == 0) {
            sigset_t none;
            sigemptyset(&none);
            struct timespec zero = { 0, 0 };
            int r = ppoll(NULL, 0, &zero, &none);
            CHECK(r == 0 || (r == -1 && errno == EINTR));
        }
        CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
        cap_yield();
    }
    return NULL;
}

/* Blocks both signals for itself: it does not keep the workers open. */
static void *sender(void *arg)
{
    (void)arg;
    sigset_t s = both();
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    while (!atomic_load(&done)) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(50000);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    cap_thread_t snd = spawn(sender, NULL);
    /* Many threads (the workers' mask rarely changes), then few (it
     * changes all the time, and the other workers are kicked). */
    cap_thread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        t[i] = spawn(changer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    iters = FEW_ITERS;
    sigset_t s = both();
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0); /* main keeps none open */
    for (long i = 0; i < FEW; i++)
        t[i] = spawn(changer, (void *)i);
    for (int i = 0; i < FEW; i++)
        join(t[i]);
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
    atomic_store(&done, 1);
    join(snd);

    sigset_t u;
    sigemptyset(&u);
    sigaddset(&u, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &u, NULL), 0);
    int before = handled;
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    cap_sleep_ns(2000000);
    CHECK_EQ(handled, before);
    sigset_t p;
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR1), 1);
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &u, NULL), 0);
    CHECK_EQ(handled, before + 1);
    puts("ok");
    return 0;
}

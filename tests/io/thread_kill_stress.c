/* SPDX-License-Identifier: MIT */
/* Description: signals sent to single threads under load. THREADS threads
 * wait in turn in a pipe read, a poll, a sleep and a semaphore wait, in a
 * loop; for ROUNDS rounds main sends each of them SIGUSR1 (no SA_RESTART)
 * and SIGUSR2 (SA_RESTART) with pthread_kill and waits until every
 * thread ran both handlers once more. Every handler runs in the thread it
 * was sent to, none is lost or run twice (each count ends at exactly
 * ROUNDS), a wait only ever fails with EINTR (at most once per signal),
 * and at least one wait per thread did. Then each thread, told to stop, is signalled out of its
 * wait. On one worker and two, with every backend. */
#include <capriccio/sync.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "io/io_util.h"

enum { THREADS = 48, ROUNDS = 25 };

struct slot {
    _Atomic cap_thread_t t;
    int p[2];
    cap_sem_t sem;
    atomic_int usr1, usr2, eintr;
    atomic_int exited;
};

static struct slot slots[THREADS];
static atomic_int started, stop;

static struct slot *mine(void)
{
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < THREADS; i++)
        if (slots[i].t == self)
            return &slots[i];
    _exit(5); /* a handler ran in a thread nobody sent it to */
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&mine()->usr1, 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&mine()->usr2, 1);
}

/* One wait of kind k; true if it failed with EINTR. */
static bool wait_once(struct slot *s, int k)
{
    char c;
    errno = 0;
    switch (k) {
    case 0: {
        CHECK_EQ(read(s->p[0], &c, 1), -1);
        break;
    }
    case 1: {
        struct pollfd pf = { .fd = s->p[0], .events = POLLIN };
        int r = poll(&pf, 1, 200);
        if (r == 0)
            return false;
        CHECK_EQ(r, -1);
        break;
    }
    case 2: {
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        if (nanosleep(&ts, NULL) == 0)
            return false;
        break;
    }
    default: {
        struct timespec abs;
        clock_gettime(CLOCK_REALTIME, &abs);
        abs.tv_nsec += 200 * 1000 * 1000;
        if (abs.tv_nsec >= 1000000000) {
            abs.tv_sec++;
            abs.tv_nsec -= 1000000000;
        }
        int rc = cap_sem_timedwait(&s->sem, &abs);
        if (rc == ETIMEDOUT)
            return false;
        CHECK_EQ(rc, EINTR);
        return true;
    }
    }
    CHECK_EQ(errno, EINTR);
    return true;
}

static void *waiter(void *arg)
{
    struct slot *s = arg;
    while (s->t == 0) /* the handlers look for it */
        cap_yield();
    atomic_fetch_add(&started, 1);
    for (unsigned k = 0; !atomic_load(&stop); k++)
        if (wait_once(s, (int)((k + (unsigned)(s - slots)) % 4)))
            atomic_fetch_add(&s->eintr, 1);
    atomic_store(&s->exited, 1);
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(pipe(slots[i].p), 0);
        CHECK_EQ(cap_sem_init(&slots[i].sem, 0, 0), 0);
        cap_thread_t t = spawn(waiter, &slots[i]);
        slots[i].t = t;
    }
    while (atomic_load(&started) < THREADS)
        cap_usleep(1000);
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < THREADS; i++) {
            CHECK_EQ(cap_thread_kill(slots[i].t, SIGUSR2), 0);
            CHECK_EQ(cap_thread_kill(slots[i].t, SIGUSR1), 0);
        }
        for (int i = 0; i < THREADS; i++)
            while (atomic_load(&slots[i].usr1) < round || atomic_load(&slots[i].usr2) < round)
                cap_usleep(500);
    }
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(atomic_load(&slots[i].usr1), ROUNDS);
        CHECK_EQ(atomic_load(&slots[i].usr2), ROUNDS);
        /* poll, sleeps and timed waits are never restarted (signal(7)) */
        CHECK_LE(atomic_load(&slots[i].eintr), 2 * ROUNDS);
        CHECK_GE(atomic_load(&slots[i].eintr), 1);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++) {
        while (!atomic_load(&slots[i].exited)) {
            CHECK_EQ(cap_thread_kill(slots[i].t, SIGUSR1), 0);
            cap_usleep(2000);
        }
        join(slots[i].t);
    }
    return 0;
}

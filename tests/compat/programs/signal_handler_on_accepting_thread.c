/* SPDX-License-Identifier: MIT */
/* Description: a process-directed signal's handler runs on a thread that
 * accepts it, also when every thread of the process is blocked.
 *  - Only `taker` leaves SIGUSR2 unblocked; main and the bystanders block
 *    it. A timer (timer_create, SIGEV_SIGNAL: sent by the kernel to the
 *    process) raises it while every thread waits: taker in a poll, the
 *    bystanders in a condition wait, main in a read of the pipe taker
 *    answers on.
 *  - In every round the handler runs exactly once, on taker
 *    (pthread_self() there is taker), and taker's poll returns EINTR
 *    after the handler ran, with errno EINTR (the handler changes errno
 *    and puts it back, as POSIX asks of a handler). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { ROUNDS = 200, BYSTANDERS = 4 };

static pthread_t taker;
static atomic_int runs, runs_elsewhere;

static void on_usr2(int sig)
{
    (void)sig;
    int saved = errno;
    if (!pthread_equal(pthread_self(), taker))
        atomic_fetch_add(&runs_elsewhere, 1);
    atomic_fetch_add(&runs, 1);
    errno = ENOENT; /* a handler that does not restore it would leak this */
    errno = saved;
}

static int to_taker[2], from_taker[2], quiet[2];
static timer_t timer;

/* Each round: told to wait (a byte: the delay in tenths of a
 * millisecond), arms the timer and waits in a poll of a pipe nothing is
 * written to, which only the signal ends, then reports the outcome. The
 * poll's timeout only covers a signal that came before it began (the
 * handler then ran on taker, running): it never decides the outcome. */
static void *take(void *arg)
{
    (void)arg;
    for (;;) {
        char go;
        EXPECT_EQ(read(to_taker[0], &go, 1), 1);
        if (go == 0)
            return NULL;
        int before = atomic_load(&runs);
        struct itimerspec at = { .it_value = { 0, 100000L * go } };
        EXPECT_EQ(timer_settime(timer, 0, &at, NULL), 0);
        char verdict = 0;
        while (verdict == 0) {
            if (atomic_load(&runs) != before) {
                verdict = 'y'; /* came before the poll: ran here, running */
                break;
            }
            struct pollfd p = { .fd = quiet[0], .events = POLLIN };
            int r = poll(&p, 1, 1000);
            int e = errno;
            if (r == 0)
                continue; /* the timer is late: wait on */
            if (r != -1 || e != EINTR)
                verdict = 'r'; /* ended, but not by the signal */
            else if (atomic_load(&runs) != before + 1)
                verdict = 'h'; /* EINTR, but not after exactly one handler run */
            else
                verdict = 'y';
        }
        EXPECT_EQ(write(from_taker[1], &verdict, 1), 1);
    }
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool done;

static void *stand_by(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr2 };
    sigemptyset(&sa.sa_mask);
    EXPECT_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    EXPECT_EQ(pipe(to_taker), 0);
    EXPECT_EQ(pipe(from_taker), 0);
    EXPECT_EQ(pipe(quiet), 0);
    struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
    EXPECT_EQ(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);

    /* taker is made with SIGUSR2 open; then main blocks it, and the
     * bystanders inherit that. */
    EXPECT_EQ(pthread_create(&taker, NULL, take, NULL), 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
    pthread_t by[BYSTANDERS];
    for (int i = 0; i < BYSTANDERS; i++)
        EXPECT_EQ(pthread_create(&by[i], NULL, stand_by, NULL), 0);

    for (int round = 0; round < ROUNDS; round++) {
        /* The timer fires 0.1-2 ms after taker arms it: with or after
         * every thread's wait. */
        char delay = (char)(1 + round % 20);
        EXPECT_EQ(write(to_taker[1], &delay, 1), 1);
        char verdict;
        EXPECT_EQ(read(from_taker[0], &verdict, 1), 1);
        EXPECT_EQ(verdict, 'y');
        EXPECT_EQ(atomic_load(&runs), round + 1);
        EXPECT_EQ(atomic_load(&runs_elsewhere), 0);
    }
    EXPECT_EQ(timer_delete(timer), 0);

    EXPECT_EQ(write(to_taker[1], "", 1), 1);
    EXPECT_EQ(pthread_join(taker, NULL), 0);
    pthread_mutex_lock(&lock);
    done = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < BYSTANDERS; i++)
        EXPECT_EQ(pthread_join(by[i], NULL), 0);
    return 0;
}

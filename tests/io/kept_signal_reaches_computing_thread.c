/* SPDX-License-Identifier: MIT */
/* Description: a process-directed signal that lands while the running
 * thread blocks it is kept for a thread that accepts it (io/sigroute.h);
 * that thread must get it even if, once it runs, it only computes. Thread
 * a blocks SIGUSR2, arms a timer that sends it to the process, computes
 * until sigpending shows it kept, then sleeps; thread b accepts it and
 * computes until its handler has run; main blocks it. Linux runs the
 * handler in b at once. On one worker b never got it: the routing is done
 * by the signal dispatch, which runs from a poll, and the worker's
 * switches went thread to thread without one (fixed: work a handler left
 * for the dispatch sends the next switch through the scheduler,
 * sched/worker.c). The loop that never parks makes a hang the failure
 * (the test's timeout). */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "io/io_util.h"

static atomic_int handled;
static timer_t timer; /* deleted by main once b has the signal: a delete
                       * drops the timer's signal if still pending */

static void on_usr2(int sig)
{
    (void)sig;
    atomic_store(&handled, 1);
}

static void mask_usr2(int how)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    CHECK_EQ(pthread_sigmask(how, &set, NULL), 0);
}

static void *keeper(void *arg)
{
    (void)arg;
    mask_usr2(SIG_BLOCK);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
    struct itimerspec once = { .it_value = { 0, 1000000 } };
    CHECK_EQ(timer_settime(timer, 0, &once, NULL), 0);
    /* Computes, no park, until the signal is pending for the process:
     * kept by the runtime if it landed on this thread's worker. */
    for (;;) {
        sigset_t pending;
        CHECK_EQ(sigpending(&pending), 0);
        if (sigismember(&pending, SIGUSR2) || atomic_load(&handled))
            break;
    }
    cap_sleep_ns(20 * 1000000L); /* b runs here on one worker */
    return NULL;
}

static void *taker(void *arg)
{
    (void)arg;
    while (!atomic_load(&handled))
        ; /* computes: no park, no yield */
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR2, on_usr2, 0);
    for (int round = 0; round < 20; round++) {
        atomic_store(&handled, 0);
        /* b is made accepting it (it inherits main's mask), then main
         * blocks it: only b accepts it when it comes. */
        mask_usr2(SIG_UNBLOCK);
        cap_thread_t a = spawn(keeper, NULL);
        cap_thread_t b = spawn(taker, NULL);
        mask_usr2(SIG_BLOCK);
        join(a);
        join(b);
        CHECK_EQ(timer_delete(timer), 0);
        CHECK_EQ(atomic_load(&handled), 1);
    }
    return 0;
}

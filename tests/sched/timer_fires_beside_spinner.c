/* SPDX-License-Identifier: MIT */
/* Description: under CAP_MIGRATE=1 a sleep or timed wait ends even while
 * the worker its thread parked on runs a thread that computes without
 * ever parking: the other worker, idle, fires the timer and runs the
 * woken thread. A sleeper creates a spinner, then sleeps 10 ms (usleep;
 * then, in a second round, a condition wait that times out, CPython's
 * GIL wait) and sets a flag that the spinner waits for. Before, the
 * timer was looked at only by the worker that kept it, which the spinner
 * held: the flag never came, and the spinner gave up after SPIN_LIMIT_S
 * seconds, which fails the test (a bound on the spin, no threshold on
 * the wake-up). A round only counts when the spinner started on the
 * worker the sleeper parked on (nearly always: the new thread stays with
 * its creator, which then parks); otherwise it is run again. Run with
 * "sleep" or "cond" to run only that kind. */
#include <capriccio.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { SPIN_LIMIT_S = 20, TRIES = 50 };

static atomic_int flag, ran_out;
static atomic_int sleeper_on, spinner_on;
static bool use_cond;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *spinner(void *arg)
{
    (void)arg;
    atomic_store(&spinner_on, cap_worker_id());
    double t0 = now_s();
    while (!atomic_load(&flag)) {
        if (now_s() - t0 > SPIN_LIMIT_S) {
            atomic_store(&ran_out, 1);
            break;
        }
    }
    return NULL;
}

static cap_mutex_t mu = CAP_MUTEX_INITIALIZER;
static cap_cond_t cv = CAP_COND_INITIALIZER; /* never signalled */

/* usleep (the library's, on a user thread), or a condition wait that
 * times out (on CLOCK_REALTIME, as CPython's). */
static void wait_10ms(void)
{
    if (!use_cond) {
        CHECK_EQ(usleep(10000), 0);
        return;
    }
    struct timespec until;
    CHECK_EQ(clock_gettime(CLOCK_REALTIME, &until), 0);
    until.tv_nsec += 10 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    int rc;
    while ((rc = cap_cond_timedwait(&cv, &mu, &until)) == 0)
        ;
    CHECK_EQ(rc, ETIMEDOUT);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
}

static void *sleeper(void *arg)
{
    (void)arg;
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, spinner, NULL), 0);
    atomic_store(&sleeper_on, cap_worker_id());
    wait_10ms();
    atomic_store(&flag, 1);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    return NULL;
}

/* One round; false if the two threads did not share a worker. */
static bool round_shared(void)
{
    atomic_store(&flag, 0);
    atomic_store(&spinner_on, -1);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, sleeper, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    if (atomic_load(&ran_out)) {
        fprintf(stderr, "the %s never ended: the spinner gave up after %d s\n",
                use_cond ? "timed condition wait" : "sleep", SPIN_LIMIT_S);
        exit(1);
    }
    return atomic_load(&spinner_on) == atomic_load(&sleeper_on);
}

int main(int argc, char **argv)
{
    if (cap_worker_count() < 2)
        SKIP("needs a second worker to be idle");
    for (int kind = 0; kind < 2; kind++) {
        use_cond = kind == 1;
        if (argc > 1 && strcmp(argv[1], use_cond ? "cond" : "sleep") != 0)
            continue;
        int tries = 0;
        while (!round_shared())
            if (++tries == TRIES)
                SKIP("the spinner never shared the sleeper's worker");
    }
    return 0;
}

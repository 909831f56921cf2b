/* SPDX-License-Identifier: MIT */
/* Description: one caught signal interrupts at most one call, also when
 * its handler runs on a kernel thread while that thread is inside the
 * zero-timeout poll(2) with which a poll() call first looks at readiness:
 * the kernel fails even that poll with EINTR, and a call that passed it
 * on gave the program a second EINTR for a delivery that the runtime
 * already handed to another call. Pollers re-poll idle pipes at once
 * after each EINTR, so the kernel threads spend much of their time in
 * that check while a fast interval timer keeps handlers coming; the
 * EINTRs the pollers see must never outnumber the handler's runs, and
 * there must be some (the signals do interrupt them). */
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "io/io_util.h"

enum { POLLERS = 32 };
/* Wall-clock length of the signal storm: bounded by the clock, not by
 * a count of sleeps, since under a loaded machine (ASan, CI) each 1 ms
 * sleep can stretch far beyond 1 ms while handlers keep coming. */
#define RUN_NS 400000000ull

static atomic_long handled, eintrs;
static atomic_int stop;
static int pipes[POLLERS][2];

static void on_alarm(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *poller(void *arg)
{
    long i = (long)arg;
    while (!atomic_load(&stop)) {
        struct pollfd p = { .fd = pipes[i][0], .events = POLLIN };
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            continue;
        }
        CHECK_EQ(r, 1); /* the byte that stops it */
    }
    return NULL;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_timer(long usec)
{
    struct itimerval it = { .it_interval = { 0, usec }, .it_value = { 0, usec } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = 0 }; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    cap_thread_t t[POLLERS];
    for (long i = 0; i < POLLERS; i++) {
        CHECK_EQ(pipe(pipes[i]), 0);
        t[i] = spawn(poller, (void *)i);
    }
    set_timer(20);
    /* Not an intercepted call: main is never the one interrupted. */
    uint64_t start = monotonic_ns();
    while (monotonic_ns() - start < RUN_NS) {
        cap_sleep_ns(1000000);
        CHECK(atomic_load(&eintrs) <= atomic_load(&handled));
    }
    set_timer(0);
    atomic_store(&stop, 1);
    for (int i = 0; i < POLLERS; i++) {
        CHECK_EQ(write(pipes[i][1], "q", 1), 1);
        join(t[i]);
        CHECK_EQ(close(pipes[i][0]), 0);
        CHECK_EQ(close(pipes[i][1]), 0);
    }
    long e = atomic_load(&eintrs), h = atomic_load(&handled);
    if (e > h)
        fprintf(stderr, "%ld EINTRs for %ld handler runs\n", e, h);
    CHECK(e <= h);
    CHECK_GT(e, 0);
    printf("ok: %ld EINTRs, %ld handler runs\n", e, h);
    return 0;
}

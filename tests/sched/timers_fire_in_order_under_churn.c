/* SPDX-License-Identifier: MIT */
/* Description: the timer heap fires in deadline order while other timers
 * are armed and disarmed around it. Sleepers wait on conditions nobody
 * signals until absolute CLOCK_MONOTONIC deadlines given in a shuffled
 * order; meanwhile churn threads keep arming far deadlines that a
 * signaller cancels early (removals from the middle of the heap). Every
 * sleeper times out no earlier than its deadline, the sleepers of one
 * worker finish in deadline order, and no churn wait ever times out.
 *
 * The order is checked among sleepers that began waiting at least
 * MARGIN_NS before their deadline: one that starts late (creating the
 * threads is slow on a loaded machine, under ASan) finds its deadline
 * passed and returns at once, legitimately ahead of earlier deadlines
 * whose timers have not fired yet. The lead time makes such starts rare. */
#include <capriccio.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "check.h"

enum { SLEEPERS = 400, CHURNERS = 64, STEP_NS = 100 * 1000 };
static const uint64_t LEAD_NS = 200 * 1000 * 1000, MARGIN_NS = 20 * 1000 * 1000;

struct waiter {
    cap_mutex_t lock;
    cap_cond_t cond;
    uint64_t deadline, began;
    int rank, worker;
    int signalled; /* [lock] churners only */
};

static struct waiter sleepers[SLEEPERS], churners[CHURNERS];
static atomic_int finish_seq, sleepers_left = SLEEPERS;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec to_ts(uint64_t ns)
{
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
                              .tv_nsec = (long)(ns % 1000000000ull) };
}

static void init_waiter(struct waiter *w)
{
    cap_condattr_t attr;
    CHECK_EQ(cap_condattr_init(&attr), 0);
    CHECK_EQ(cap_condattr_setclock(&attr, CLOCK_MONOTONIC), 0);
    CHECK_EQ(cap_mutex_init(&w->lock, NULL), 0);
    CHECK_EQ(cap_cond_init(&w->cond, &attr), 0);
}

static bool in_time(const struct waiter *w)
{
    return w->began + MARGIN_NS <= w->deadline;
}

static void *sleeper(void *arg)
{
    struct waiter *w = arg;
    struct timespec at = to_ts(w->deadline);
    cap_mutex_lock(&w->lock);
    w->began = mono_ns();
    CHECK_EQ(cap_cond_timedwait(&w->cond, &w->lock, &at), ETIMEDOUT);
    cap_mutex_unlock(&w->lock);
    CHECK_GE(mono_ns(), w->deadline);
    w->worker = cap_worker_id();
    w->rank = atomic_fetch_add(&finish_seq, 1);
    atomic_fetch_sub(&sleepers_left, 1);
    return NULL;
}

/* Waits with a far deadline until signalled, over and over. */
static void *churner(void *arg)
{
    struct waiter *w = arg;
    uint64_t seed = (uintptr_t)arg;
    while (atomic_load(&sleepers_left) > 0) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        struct timespec at = to_ts(mono_ns() + 10000000000ull + (seed >> 40));
        cap_mutex_lock(&w->lock);
        while (!w->signalled)
            CHECK_EQ(cap_cond_timedwait(&w->cond, &w->lock, &at), 0);
        w->signalled = 0;
        cap_mutex_unlock(&w->lock);
    }
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    uint64_t seed = 12345;
    while (atomic_load(&sleepers_left) > 0) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        struct waiter *w = &churners[(seed >> 33) % CHURNERS];
        cap_mutex_lock(&w->lock);
        w->signalled = 1;
        cap_cond_signal(&w->cond);
        cap_mutex_unlock(&w->lock);
        cap_yield();
    }
    for (int i = 0; i < CHURNERS; i++) { /* let every churner see the end */
        cap_mutex_lock(&churners[i].lock);
        churners[i].signalled = 1;
        cap_cond_signal(&churners[i].cond);
        cap_mutex_unlock(&churners[i].lock);
    }
    return NULL;
}

int main(void)
{
    /* Deadlines STEP_NS apart, handed out in a shuffled order. */
    int order[SLEEPERS];
    for (int i = 0; i < SLEEPERS; i++)
        order[i] = i;
    uint64_t seed = 42;
    for (int i = SLEEPERS - 1; i > 0; i--) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((seed >> 33) % (uint64_t)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    cap_thread_t ct[CHURNERS], st[SLEEPERS], sig;
    for (int i = 0; i < CHURNERS; i++) {
        init_waiter(&churners[i]);
        CHECK_EQ(cap_thread_create(&ct[i], NULL, churner, &churners[i]), 0);
    }
    uint64_t base = mono_ns() + LEAD_NS;
    for (int i = 0; i < SLEEPERS; i++) {
        init_waiter(&sleepers[i]);
        sleepers[i].deadline = base + (uint64_t)order[i] * STEP_NS;
        CHECK_EQ(cap_thread_create(&st[i], NULL, sleeper, &sleepers[i]), 0);
    }
    CHECK_EQ(cap_thread_create(&sig, NULL, signaller, NULL), 0);
    for (int i = 0; i < SLEEPERS; i++)
        CHECK_EQ(cap_thread_join(st[i], NULL), 0);
    CHECK_EQ(cap_thread_join(sig, NULL), 0);
    for (int i = 0; i < CHURNERS; i++)
        CHECK_EQ(cap_thread_join(ct[i], NULL), 0);

    for (int i = 0; i < SLEEPERS; i++)
        for (int j = 0; j < SLEEPERS; j++)
            if (sleepers[i].worker == sleepers[j].worker &&
                sleepers[i].deadline > sleepers[j].deadline && in_time(&sleepers[i]) &&
                in_time(&sleepers[j]))
                CHECK_GT(sleepers[i].rank, sleepers[j].rank);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a timed join whose deadline comes with the thread's end.
 * Each target sleeps until an instant D and returns; its joiner waits
 * until the same D. Either the join ends it (0, with its value) or it
 * times out, and then the target is still joinable: a plain join gets
 * the value. Never both, never neither (a timed-out joiner that had
 * been taken off by the exit would leave the thread joined and its TCB
 * unreleased, or released twice: AddressSanitizer's configuration
 * checks that). Also the errors: EDEADLK for self, EINVAL for a detached
 * thread and for another clock or a bad time, ESRCH for a made-up handle,
 * and tryjoin's EBUSY. */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "check.h"

enum { PAIRS = 16, ROUNDS = 150 };

static struct timespec at(uint64_t ns)
{
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
}

static uint64_t now_ns(void)
{
    struct timespec t;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &t), 0);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct pair {
    struct timespec when, deadline; /* the target's end, the joiner's time */
    intptr_t value;
    cap_thread_t target;
    int joined_by_timed, timed_out;
};

static void *target(void *arg)
{
    struct pair *p = arg;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &p->when, NULL) != 0) {
    }
    return (void *)p->value;
}

static void *joiner(void *arg)
{
    struct pair *p = arg;
    void *v = NULL;
    int rc = cap_thread_clockjoin(p->target, &v, CLOCK_MONOTONIC, &p->deadline);
    if (rc == 0) {
        CHECK_EQ((intptr_t)v, p->value);
        p->joined_by_timed = 1;
    } else {
        CHECK_EQ(rc, ETIMEDOUT);
        p->timed_out = 1;
        /* Still joinable: the value comes to a plain join. */
        CHECK_EQ(cap_thread_join(p->target, &v), 0);
        CHECK_EQ((intptr_t)v, p->value);
    }
    return NULL;
}

static void *self_join(void *arg)
{
    (void)arg;
    struct timespec later = at(now_ns() + 1000000000u);
    CHECK_EQ(cap_thread_clockjoin(cap_thread_self(), NULL, CLOCK_MONOTONIC, &later), EDEADLK);
    CHECK_EQ(cap_thread_tryjoin(cap_thread_self(), NULL), EBUSY); /* running, as glibc */
    return NULL;
}

static void *spin_until_told(void *arg)
{
    volatile int *stop = arg;
    while (!*stop)
        cap_yield();
    return (void *)7;
}

static volatile int stop_joinable, stop_detached;

static void errors(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, self_join, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    CHECK_EQ(cap_thread_create(&t, NULL, spin_until_told, (void *)&stop_joinable), 0);
    struct timespec later = at(now_ns() + 1000000000u);
    CHECK_EQ(cap_thread_clockjoin(t, NULL, CLOCK_PROCESS_CPUTIME_ID, &later), EINVAL);
    struct timespec bad = { .tv_sec = 1, .tv_nsec = 1000000000 };
    CHECK_EQ(cap_thread_clockjoin(t, NULL, CLOCK_REALTIME, &bad), EINVAL);
    bad.tv_nsec = -1;
    CHECK_EQ(cap_thread_clockjoin(t, NULL, CLOCK_MONOTONIC, &bad), EINVAL);
    CHECK_EQ(cap_thread_tryjoin(t, NULL), EBUSY);
    struct timespec past = { 0, 0 };
    CHECK_EQ(cap_thread_clockjoin(t, NULL, CLOCK_REALTIME, &past), ETIMEDOUT);
    stop_joinable = 1;
    void *v = NULL;
    CHECK_EQ(cap_thread_clockjoin(t, &v, CLOCK_MONOTONIC, NULL), 0); /* NULL: no limit */
    CHECK_EQ((intptr_t)v, 7);

    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setdetachstate(&attr, CAP_CREATE_DETACHED), 0);
    CHECK_EQ(cap_thread_create(&t, &attr, spin_until_told, (void *)&stop_detached), 0);
    CHECK_EQ(cap_thread_clockjoin(t, NULL, CLOCK_MONOTONIC, &later), EINVAL);
    stop_detached = 1;
    CHECK_EQ(cap_thread_attr_destroy(&attr), 0);

    cap_thread_t made_up = (cap_thread_t)0x7777777700001234ull;
    CHECK_EQ(cap_thread_clockjoin(made_up, NULL, CLOCK_MONOTONIC, &later), ESRCH);
    CHECK_EQ(cap_thread_tryjoin(made_up, NULL), ESRCH);
}

int main(void)
{
    errors();
    static struct pair pairs[PAIRS];
    int by_timed = 0, timeouts = 0;
    for (int round = 0; round < ROUNDS; round++) {
        /* D a little ahead; each joiner's time a few microseconds before
         * or after its target's end, so that some exits come just
         * before, some just after, their joiner's timer. */
        uint64_t d = now_ns() + 2000000u;
        cap_thread_t joiners[PAIRS];
        for (int i = 0; i < PAIRS; i++) {
            struct pair *p = &pairs[i];
            uint64_t end = d + (uint64_t)i * 3000u;
            *p = (struct pair){ .when = at(end), .deadline = at(end + (uint64_t)(i % 8) * 4000u - 16000u),
                                .value = round * PAIRS + i };
            CHECK_EQ(cap_thread_create(&p->target, NULL, target, p), 0);
            CHECK_EQ(cap_thread_create(&joiners[i], NULL, joiner, p), 0);
        }
        for (int i = 0; i < PAIRS; i++) {
            CHECK_EQ(cap_thread_join(joiners[i], NULL), 0);
            CHECK_EQ(pairs[i].joined_by_timed + pairs[i].timed_out, 1);
            by_timed += pairs[i].joined_by_timed;
            timeouts += pairs[i].timed_out;
        }
    }
    CHECK_EQ(by_timed + timeouts, PAIRS * ROUNDS);
    return 0;
}

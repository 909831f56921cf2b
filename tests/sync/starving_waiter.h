/* SPDX-License-Identifier: MIT */
/* A mutex waiter made to starve, for the tests of the mutex's hand-off:
 * main holds the test's mutex `m`, a waiter thread parks on it, and main
 * unlocks and relocks (barging past the woken waiter) until the waiter
 * flags itself starving (state bit STARVING_BIT), after which the next
 * unlock hands the lock to it. Included by one test file each (the
 * statics are that test's). */
#ifndef CAP_TEST_STARVING_WAITER_H
#define CAP_TEST_STARVING_WAITER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "util.h"

enum { HOLDER_ROUNDS = 20000, HOLD_NS = 100 * 1000, STARVING_BIT = 4 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static atomic_int waiter_in, waiter_ready;

static inline void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_ready, 1);
    CHECK_EQ(cap_mutex_lock(&m), 0); /* the holder has it: we park */
    atomic_store(&waiter_in, 1);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

/* A thread that takes m once. */
static inline void *lock_once(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

/* Takes m and starts the waiter, parked on it (most likely: it is given
 * time to get there) when this returns. */
static inline cap_thread_t hold_with_parked_waiter(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_thread_t w = spawn(waiter, NULL);
    while (!atomic_load(&waiter_ready))
        cap_sleep_ns(HOLD_NS);
    cap_sleep_ns(HOLD_NS); /* let it reach the lock and park */
    return w;
}

/* Barges past the waiter w until it flags itself starving; m is held on
 * return. false if it never did (it got in first, on another worker, or
 * HOLDER_ROUNDS passed): then m is released and w joined. */
static inline bool barge_until_starving(cap_thread_t w)
{
    int rounds = 0;
    while (!(atomic_load((_Atomic uint32_t *)&m.state) & STARVING_BIT)) {
        CHECK_EQ(cap_mutex_unlock(&m), 0); /* wakes the waiter... */
        CHECK_EQ(cap_mutex_lock(&m), 0);   /* ...and barges past it */
        if (atomic_load(&waiter_in) || ++rounds == HOLDER_ROUNDS) {
            fprintf(stderr, "no starving waiter after %d rounds: skipped\n", rounds);
            CHECK_EQ(cap_mutex_unlock(&m), 0);
            join(w);
            return false;
        }
        cap_sleep_ns(HOLD_NS); /* the waiter runs now and finds the lock taken */
    }
    return true;
}

#endif

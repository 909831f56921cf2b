/* SPDX-License-Identifier: MIT */
/* Threads placed on known workers, for tests that need one thread here
 * and another there: roles_start spawns ROLE_CANDIDATES threads, which
 * the runtime spreads over its workers, and returns once each has noted
 * its worker; the test then picks by roles_worker and casts with
 * roles_cast: the others end first (their polls of their role would
 * otherwise wake both workers every 100 us), then the cast candidates
 * get their roles in the order given and call the test's function with
 * theirs. roles_join joins them all; roles_compute_until is how a role
 * holds its worker without parking. Threads do
 * not move by default, so a candidate runs its role on the worker it
 * noted (a test of this kind is registered as not migrated). */
#ifndef CAP_TESTS_IO_WORKER_ROLES_H
#define CAP_TESTS_IO_WORKER_ROLES_H

#include "io/io_util.h"

enum { ROLE_CANDIDATES = 8, ROLE_NONE = 1 };

static atomic_int role_worker_of[ROLE_CANDIDATES], role_of[ROLE_CANDIDATES];
static void (*role_play)(int role);
static cap_thread_t role_threads[ROLE_CANDIDATES];

static inline void *role_candidate(void *arg)
{
    int i = (int)(intptr_t)arg;
    atomic_store(&role_worker_of[i], cap_worker_id() + 1);
    int r;
    while ((r = atomic_load(&role_of[i])) == 0)
        cap_sleep_ns(100000);
    if (r != ROLE_NONE)
        role_play(r);
    return NULL;
}

static inline void roles_start(void (*play)(int role))
{
    role_play = play;
    for (int i = 0; i < ROLE_CANDIDATES; i++) {
        atomic_store(&role_worker_of[i], 0);
        atomic_store(&role_of[i], 0);
    }
    for (int i = 0; i < ROLE_CANDIDATES; i++)
        role_threads[i] = spawn(role_candidate, (void *)(intptr_t)i);
    for (int i = 0; i < ROLE_CANDIDATES; i++)
        while (atomic_load(&role_worker_of[i]) == 0)
            cap_sleep_ns(100000);
}

/* Candidate i's worker, as an id + 1. */
static inline int roles_worker(int i)
{
    return atomic_load(&role_worker_of[i]);
}

/* Candidates who[k] get roles[k] (each above ROLE_NONE), in that order;
 * the rest end. */
static inline void roles_cast(int n, const int who[], const int roles[])
{
    for (int i = 0; i < ROLE_CANDIDATES; i++) {
        bool cast = false;
        for (int k = 0; k < n; k++)
            cast = cast || who[k] == i;
        if (!cast)
            atomic_store(&role_of[i], ROLE_NONE);
    }
    for (int k = 0; k < n; k++)
        atomic_store(&role_of[who[k]], roles[k]);
}

static inline void roles_join(void)
{
    for (int i = 0; i < ROLE_CANDIDATES; i++)
        join(role_threads[i]);
}

static inline uint64_t roles_now_ns(void)
{
    struct timespec ts;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Computes, never parking or yielding (a role that holds its worker), for
 * ns or until *flag > floor (flag NULL: for ns); whether the flag moved. */
static inline bool roles_compute_until(atomic_int *flag, int floor, uint64_t ns)
{
    uint64_t end = roles_now_ns() + ns;
    while (flag == NULL || atomic_load(flag) <= floor)
        if (roles_now_ns() > end)
            return false;
    return true;
}

#endif

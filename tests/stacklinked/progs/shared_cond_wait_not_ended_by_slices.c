/* SPDX-License-Identifier: MIT */
/* Description: under linked stacks a process-shared condition wait parks
 * in its process in 2 ms slices (sync/shared_wait.c), and the end of a
 * slice is not a wake-up: with nobody signalling, a timed wait (either
 * clock) returns ETIMEDOUT at its deadline, not 0 at the first slice's
 * end, and an untimed wait returns once, for the one signal sent. Before,
 * each slice's end returned 0 from the wait (a spurious wake-up every
 * 2 ms, which glibc's wait never makes). */
#include <capriccio.h>
#include <errno.h>
#include <time.h>

#include "sync/util.h"

struct shared {
    cap_mutex_t m;
    cap_cond_t c;
    int go;
};

static struct shared *sh;
static int returns;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    __atomic_store_n(&sh->go, 1, __ATOMIC_SEQ_CST);
    while (sh->go != 2) {
        CHECK_EQ(cap_cond_wait(&sh->c, &sh->m), 0);
        returns++;
    }
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    return NULL;
}

int main(void)
{
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->m, CAP_MUTEX_NORMAL);
    shared_cond_init(&sh->c);

    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    struct timespec rt = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_cond_timedwait(&sh->c, &sh->m, &rt), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), rt));
    struct timespec mono = ts_after(CLOCK_MONOTONIC, 50);
    CHECK_EQ(cap_cond_clockwait(&sh->c, &sh->m, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), mono));
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);

    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, waiter, NULL), 0);
    while (!__atomic_load_n(&sh->go, __ATOMIC_SEQ_CST))
        cap_sleep_ns(1000000);
    cap_sleep_ns(30000000); /* many slices: none may end the wait */
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    sh->go = 2;
    CHECK_EQ(cap_cond_signal(&sh->c), 0);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(returns, 1);
    CHECK_EQ(cap_cond_destroy(&sh->c), 0);
    CHECK_EQ(cap_mutex_destroy(&sh->m), 0);
    return 0;
}

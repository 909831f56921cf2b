/* SPDX-License-Identifier: MIT */
/* Description: 1,500 threads hammer one mutex with lock, trylock and
 * timedlock (deadlines that often expire while a hand-off is under way),
 * sleeping inside some critical sections so waiters pass the starvation
 * threshold and unlocks hand the lock over. Mutual exclusion holds, the
 * count of successful acquisitions is exact, and afterwards the mutex is
 * free with no hand-off left stranded (destroy returns 0, a last lock and
 * unlock work). */
#include <errno.h>
#include <stdatomic.h>

#include "util.h"

enum { THREADS = 1500, ROUNDS = 40 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static long counter;        /* under m */
static atomic_long acquired; /* successful lock calls, counted outside m */
static atomic_int inside;

static int take(long id, int i)
{
    switch ((id + i) % 4) {
    case 0: {
        struct timespec ts = ts_after(CLOCK_REALTIME, (id + i) % 3); /* 0-2 ms */
        int rc = cap_mutex_timedlock(&m, &ts);
        if (rc != ETIMEDOUT)
            CHECK_EQ(rc, 0);
        return rc;
    }
    case 1: {
        int rc = cap_mutex_trylock(&m);
        if (rc != EBUSY)
            CHECK_EQ(rc, 0);
        return rc;
    }
    default:
        CHECK_EQ(cap_mutex_lock(&m), 0);
        return 0;
    }
}

static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (take(id, i) != 0)
            continue;
        CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
        atomic_fetch_add(&acquired, 1);
        long c = counter;
        if ((id + i) % 97 == 0)
            cap_sleep_ns(300 * 1000); /* waiters queue up past 1 ms */
        else if ((id + i) % 5 == 0)
            cap_yield();
        counter = c + 1;
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(cap_mutex_unlock(&m), 0);
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        t[i] = spawn(work, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(counter, atomic_load(&acquired));
    CHECK_EQ(cap_mutex_destroy(&m), 0); /* free: nothing stranded */
    CHECK_EQ(cap_mutex_trylock(&m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return 0;
}

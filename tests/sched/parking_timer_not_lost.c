/* SPDX-License-Identifier: MIT */
/* Description: under CAP_MIGRATE=1 an idle worker fires the expired
 * timers of the other workers (sched/worker.c, "Timers"), but never the
 * timer of a thread still in the middle of parking: the thread arms its
 * timer before it switches away, and only once it has switched may its
 * park be claimed. A timer fired in that window claimed nothing and was
 * gone, and the thread slept for good. Three threads make 50,000 sleeps
 * of 1 us and timed condition waits of 500 ns each (deadlines that pass
 * while they park) on several workers, whose idle ones keep expiring
 * the busy ones' timers; every wait must end (the timeout fails the
 * test). The library before idle workers looked at other heaps passed
 * (nothing but the owner fired a timer); a version that fired them
 * without the check hung in 3 of 5 runs on 4 workers. */
#include <capriccio.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 3, WAITS = 50000 };

static void *body(void *arg)
{
    (void)arg;
    cap_mutex_t mu = CAP_MUTEX_INITIALIZER;
    cap_cond_t cv = CAP_COND_INITIALIZER; /* never signalled */
    for (int i = 0; i < WAITS; i++) {
        if (i & 1) {
            CHECK_EQ(usleep(1), 0);
            continue;
        }
        struct timespec until;
        CHECK_EQ(clock_gettime(CLOCK_REALTIME, &until), 0);
        until.tv_nsec += 500;
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
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, body, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    return 0;
}

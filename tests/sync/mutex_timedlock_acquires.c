/* SPDX-License-Identifier: MIT */
/* Description: a timedlock waiting on a held mutex gets it (0) when the
 * holder unlocks before the deadline, and then owns it. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_ERRORCHECK_INITIALIZER;
static cap_sem_t started;

static void *waiter(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    CHECK_EQ(cap_sem_post(&started), 0);
    CHECK_EQ(cap_mutex_timedlock(&m, &abs), 0);
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK); /* it is ours */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&started, 0, 0), 0);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_thread_t t = spawn(waiter, NULL);
    CHECK_EQ(cap_sem_wait(&started), 0);
    CHECK_EQ(cap_sleep_ns(1000000), 0); /* let it block (either way it must succeed) */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    join(t);
    CHECK_EQ(cap_mutex_trylock(&m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return 0;
}

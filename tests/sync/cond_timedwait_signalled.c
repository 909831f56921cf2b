/* SPDX-License-Identifier: MIT */
/* Description: a timed wait with a far deadline returns 0, holding the
 * mutex, when another thread signals it. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_ERRORCHECK_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int ready;

static void *signaller(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    ready = 1;
    CHECK_EQ(cap_cond_signal(&c), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_thread_t t = spawn(signaller, NULL);
    struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    while (!ready)
        CHECK_EQ(cap_cond_timedwait(&c, &m, &abs), 0);
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    join(t);
    return 0;
}

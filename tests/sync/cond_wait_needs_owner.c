/* SPDX-License-Identifier: MIT */
/* Description: waiting with an ERRORCHECK or RECURSIVE mutex the caller
 * does not hold fails with EPERM (and does not wait). */
#include "util.h"

static cap_mutex_t e = CAP_MUTEX_ERRORCHECK_INITIALIZER;
static cap_mutex_t r = CAP_MUTEX_RECURSIVE_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;

static void *other(void *arg)
{
    struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    CHECK_EQ(cap_cond_wait(&c, arg), EPERM);
    CHECK_EQ(cap_cond_timedwait(&c, arg, &abs), EPERM);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_cond_wait(&c, &e), EPERM);
    CHECK_EQ(cap_cond_wait(&c, &r), EPERM);
    CHECK_EQ(cap_mutex_lock(&e), 0);
    CHECK_EQ(cap_mutex_lock(&r), 0);
    join(spawn(other, &e));
    join(spawn(other, &r));
    CHECK_EQ(cap_mutex_unlock(&e), 0);
    CHECK_EQ(cap_mutex_unlock(&r), 0);
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

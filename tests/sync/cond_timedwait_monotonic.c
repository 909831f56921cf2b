/* SPDX-License-Identifier: MIT */
/* Description: a condition variable whose attribute chose CLOCK_MONOTONIC
 * reads timedwait deadlines on that clock: a deadline 40 ms ahead on
 * CLOCK_MONOTONIC times out once that clock reaches it (a monotonic time
 * read as CLOCK_REALTIME would be decades in the past and time out at
 * once, failing the check). The attribute's values are checked too. */
#include "util.h"

int main(void)
{
    cap_condattr_t a;
    clockid_t clk = -1;
    int v = -1;
    CHECK_EQ(cap_condattr_init(&a), 0);
    CHECK_EQ(cap_condattr_getclock(&a, &clk), 0);
    CHECK_EQ(clk, CLOCK_REALTIME);
    CHECK_EQ(cap_condattr_setclock(&a, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
    CHECK_EQ(cap_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    CHECK_EQ(cap_condattr_getclock(&a, &clk), 0);
    CHECK_EQ(clk, CLOCK_MONOTONIC);
    CHECK_EQ(cap_condattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_PRIVATE);
    CHECK_EQ(cap_condattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_condattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_SHARED);
    CHECK_EQ(cap_condattr_setpshared(&a, 5), EINVAL);
    CHECK_EQ(cap_condattr_setpshared(&a, CAP_PROCESS_PRIVATE), 0);

    cap_cond_t c;
    cap_mutex_t m = CAP_MUTEX_INITIALIZER;
    CHECK_EQ(cap_cond_init(&c, &a), 0);
    CHECK_EQ(cap_condattr_destroy(&a), 0);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 40);
    CHECK_EQ(cap_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

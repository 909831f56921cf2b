/* SPDX-License-Identifier: MIT */
/* Description: pthread_cond_timedwait times out (ETIMEDOUT, mutex held
 * again) no earlier than its deadline, on CLOCK_REALTIME by default and on
 * CLOCK_MONOTONIC when the condattr says so; a signalled timed wait
 * returns 0. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c;
static int flag;

static void *setter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    flag = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_cond_t rt = PTHREAD_COND_INITIALIZER;
    EXPECT_EQ(pthread_mutex_lock(&m), 0);
    struct timespec d = after_ms(CLOCK_REALTIME, 40);
    EXPECT_EQ(pthread_cond_timedwait(&rt, &m, &d), ETIMEDOUT);
    EXPECT(reached(CLOCK_REALTIME, d));
    EXPECT_EQ(pthread_mutex_trylock(&m), EBUSY); /* we hold it again */

    pthread_condattr_t a;
    clockid_t clk;
    EXPECT_EQ(pthread_condattr_init(&a), 0);
    EXPECT_EQ(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    EXPECT_EQ(pthread_condattr_getclock(&a, &clk), 0);
    EXPECT_EQ(clk, CLOCK_MONOTONIC);
    EXPECT_EQ(pthread_cond_init(&c, &a), 0);
    EXPECT_EQ(pthread_condattr_destroy(&a), 0);
    d = after_ms(CLOCK_MONOTONIC, 40);
    EXPECT_EQ(pthread_cond_timedwait(&c, &m, &d), ETIMEDOUT);
    EXPECT(reached(CLOCK_MONOTONIC, d));

    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, setter, NULL), 0);
    d = after_ms(CLOCK_MONOTONIC, 3600 * 1000L);
    while (!flag)
        EXPECT_EQ(pthread_cond_timedwait(&c, &m, &d), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_cond_destroy(&c), 0);
    return 0;
}

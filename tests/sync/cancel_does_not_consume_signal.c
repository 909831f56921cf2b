/* SPDX-License-Identifier: MIT */
/* Description: a cancelled condition waiter does not consume a signal
 * meant for the others: with two threads parked on a condition, cancelling
 * the first and then signalling once still wakes the second. (If the
 * signal went to the cancelled thread, the second would wait forever and
 * the test would time out.) With one worker both are parked for sure;
 * with two the check is weaker but must still pass. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int waiting, token;

static void unlock_mutex(void *arg)
{
    CHECK_EQ(cap_mutex_unlock(arg), 0);
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_cleanup_push(unlock_mutex, &m);
    waiting++;
    while (token == 0)
        CHECK_EQ(cap_cond_wait(&c, &m), 0);
    token--;
    cap_cleanup_pop(1);
    return (void *)1;
}

int main(void)
{
    cap_thread_t a = spawn(waiter, NULL);
    cap_thread_t b = spawn(waiter, NULL);
    for (;;) {
        CHECK_EQ(cap_mutex_lock(&m), 0);
        int w = waiting;
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        if (w == 2)
            break;
        cap_yield();
    }
    cap_yield(); /* with one worker: both are parked in the wait now */
    CHECK_EQ(cap_thread_cancel(a), 0);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    token = 1;
    CHECK_EQ(cap_cond_signal(&c), 0); /* exactly one signal */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK(join(a) == CAP_CANCELED);
    CHECK(join(b) == (void *)1);
    CHECK_EQ(token, 0);
    return 0;
}

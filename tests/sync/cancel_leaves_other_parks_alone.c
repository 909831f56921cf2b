/* SPDX-License-Identifier: MIT */
/* Description: a cancel request wakes a thread only from a park at a
 * cancellation point, never from any other park. main calls
 * cap_thread_exit and parks for good (not a cancellation point: a wake-up
 * there is fatal); another thread cancels it repeatedly, then finishes,
 * and the process must end normally with status 0 once it does. */
#include "util.h"

static cap_thread_t main_thread;

static void *canceller(void *arg)
{
    (void)arg;
    cap_sleep_ns(5000000); /* main is parked in cap_thread_exit by now */
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(cap_thread_cancel(main_thread), 0);
        cap_yield();
    }
    cap_sleep_ns(20000000); /* a wrongly woken main would die meanwhile */
    return NULL;            /* the last thread: the process exits 0 */
}

int main(void)
{
    main_thread = cap_thread_self();
    spawn(canceller, NULL);
    cap_thread_exit(NULL);
}

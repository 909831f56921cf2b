/* SPDX-License-Identifier: MIT */
/* Description: cancelling a stale handle is ESRCH; cancelling a thread
 * that passes no cancellation point (or has already finished) is 0 and
 * leaves its exit value alone; and a request against one thread never
 * leaks into the next thread that reuses its slot (slots are reused
 * last-freed-first, so the sleeper below gets the cancelled one's). */
#include "util.h"

static void *quick(void *arg)
{
    return arg;
}

static void *sleepy(void *arg)
{
    cap_sleep_ns(1000); /* a cancellation point */
    cap_testcancel();
    return arg;
}

int main(void)
{
    CHECK_EQ(cap_thread_cancel(0), ESRCH);
    for (int i = 0; i < 100; i++) {
        cap_thread_t a = spawn(quick, (void *)1);
        if (i % 2)
            cap_sleep_ns(100000); /* probably finished by now */
        CHECK_EQ(cap_thread_cancel(a), 0);
        CHECK_EQ((intptr_t)join(a), 1);
        CHECK_EQ(cap_thread_cancel(a), ESRCH);
        cap_thread_t b = spawn(sleepy, (void *)2);
        CHECK_EQ((intptr_t)join(b), 2);
    }
    return 0;
}

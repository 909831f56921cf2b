/* SPDX-License-Identifier: MIT */
/* Description: with cancellation disabled a request stays pending through
 * cancellation points (a sleep, a testcancel) and is acted on at the
 * first point after enabling it again; setcancelstate/type report the old
 * values and refuse unknown ones; ASYNCHRONOUS is accepted, and switching
 * to it acts on a pending request at once. */
#include "util.h"

static int progress;

static void *disabled(void *arg)
{
    (void)arg;
    int old = -1;
    CHECK_EQ(cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &old), 0);
    CHECK_EQ(old, CAP_CANCEL_ENABLE);
    CHECK_EQ(cap_thread_setcancelstate(5, &old), EINVAL);
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    cap_testcancel();
    cap_sleep_ns(1000);
    progress = 1;
    CHECK_EQ(cap_thread_setcancelstate(CAP_CANCEL_ENABLE, &old), 0);
    CHECK_EQ(old, CAP_CANCEL_DISABLE);
    progress = 2; /* enabling is not itself a point (deferred type) */
    cap_testcancel();
    progress = 3;
    return NULL;
}

static void *async(void *arg)
{
    (void)arg;
    int old = -1;
    CHECK_EQ(cap_thread_setcanceltype(7, &old), EINVAL);
    CHECK_EQ(cap_thread_setcanceltype(CAP_CANCEL_DEFERRED, &old), 0);
    CHECK_EQ(old, CAP_CANCEL_DEFERRED);
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    progress = 10;
    cap_thread_setcanceltype(CAP_CANCEL_ASYNCHRONOUS, &old); /* acts here */
    progress = 11;
    return NULL;
}

int main(void)
{
    CHECK(join(spawn(disabled, NULL)) == CAP_CANCELED);
    CHECK_EQ(progress, 2);
    CHECK(join(spawn(async, NULL)) == CAP_CANCELED);
    CHECK_EQ(progress, 10);
    int old = -1;
    CHECK_EQ(cap_thread_setcanceltype(CAP_CANCEL_ASYNCHRONOUS, NULL), 0);
    CHECK_EQ(cap_thread_setcanceltype(CAP_CANCEL_DEFERRED, &old), 0);
    CHECK_EQ(old, CAP_CANCEL_ASYNCHRONOUS);
    return 0;
}

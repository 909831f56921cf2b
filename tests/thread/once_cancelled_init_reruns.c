/* SPDX-License-Identifier: MIT */
/* Description: an init routine cancelled at a cancellation point leaves
 * the once as if cap_once had never been called (POSIX): a thread that
 * was parked on it and a later caller are not stuck for good; exactly one
 * of them runs init again, and every caller returns once it has. */
#include <capriccio.h>

#include "check.h"

static cap_once_t once = CAP_ONCE_INIT;
static cap_sem_t inside, never;
static int init_calls;

static void init(void)
{
    if (++init_calls == 1) {
        CHECK_EQ(cap_sem_post(&inside), 0);
        cap_sem_wait(&never); /* a cancellation point; never posted */
        CHECK(!"the first init must not return");
    }
}

static void *caller(void *arg);

static cap_thread_t spawn(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, caller, NULL), 0);
    return t;
}

static void *join(cap_thread_t t)
{
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    return ret;
}

static void *caller(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_once(&once, init), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&inside, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&never, 0, 0), 0);
    cap_thread_t first = spawn();
    CHECK_EQ(cap_sem_wait(&inside), 0);
    cap_thread_t parked = spawn();
    cap_sleep_ns(1000000); /* most likely parked on the once by now */
    CHECK_EQ(cap_thread_cancel(first), 0);
    CHECK(join(first) == CAP_CANCELED);
    CHECK(join(parked) == NULL);
    CHECK_EQ(cap_once(&once, init), 0);
    CHECK_EQ(init_calls, 2);
    return 0;
}

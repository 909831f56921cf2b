/* SPDX-License-Identifier: MIT */
/* Description: cap_thread_exit from deep in a call chain ends the thread
 * with that value; cap_thread_self/equal identify threads. */
#include <capriccio.h>
#include <stdint.h>

#include "check.h"

static cap_thread_t seen_self;

static volatile int exit_at_bottom = 1;

static int deep(int depth)
{
    if (depth == 0) {
        if (exit_at_bottom)
            cap_thread_exit((void *)(intptr_t)1234);
        return 0;
    }
    return deep(depth - 1) + 1;
}

static void *worker(void *arg)
{
    seen_self = cap_thread_self();
    (void)deep(20);
    return (void *)(intptr_t)-1; /* never reached */
}

int main(void)
{
    cap_thread_t t;
    void *ret = NULL;
    CHECK_EQ(cap_thread_create(&t, NULL, worker, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((intptr_t)ret, 1234);
    CHECK(cap_thread_equal(seen_self, t));
    CHECK(!cap_thread_equal(cap_thread_self(), t));
    CHECK(cap_thread_equal(cap_thread_self(), cap_thread_self()));
    return 0;
}

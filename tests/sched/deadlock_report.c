/* SPDX-License-Identifier: MIT */
/* Description: when every thread is parked with nothing that could wake
 * it (here: two join cycles, alpha <-> beta and main <-> gamma), the runtime prints each thread with its state and reason and
 * exits with status 2. CTest checks the status (through the wrapper in
 * tests.cmake) and the report's text. */
#include <capriccio.h>

#include "check.h"

static cap_thread_t a, b, main_handle;
static volatile int b_ready;

static void *join_b(void *arg)
{
    while (!b_ready)
        cap_yield();
    cap_thread_join(b, NULL);
    return NULL;
}

static void *join_a(void *arg)
{
    cap_thread_join(a, NULL);
    return NULL;
}

static void *join_main(void *arg)
{
    cap_thread_join(main_handle, NULL);
    return NULL;
}

int main(void)
{
    main_handle = cap_thread_self();
    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setname(&attr, "alpha"), 0);
    CHECK_EQ(cap_thread_create(&a, &attr, join_b, NULL), 0);
    CHECK_EQ(cap_thread_attr_setname(&attr, "beta"), 0);
    CHECK_EQ(cap_thread_create(&b, &attr, join_a, NULL), 0);
    b_ready = 1;
    cap_thread_t g;
    CHECK_EQ(cap_thread_attr_setname(&attr, "gamma"), 0);
    CHECK_EQ(cap_thread_create(&g, &attr, join_main, NULL), 0);
    cap_thread_join(g, NULL);
    return 0; /* never reached: the runtime reports the deadlock */
}

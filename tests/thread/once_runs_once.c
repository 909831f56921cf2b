/* SPDX-License-Identifier: MIT */
/* Description: with many threads racing into cap_once, init runs exactly
 * once and no caller returns before it has finished (init yields and
 * sleeps midway, so the others must park for it). */
#include <capriccio.h>
#include <stdatomic.h>

#include "check.h"

enum { THREADS = 1000 };

static cap_once_t once = CAP_ONCE_INIT;
static atomic_int init_calls;
static atomic_int init_done;

static void init(void)
{
    atomic_fetch_add(&init_calls, 1);
    cap_yield();
    cap_sleep_ns(2 * 1000 * 1000);
    atomic_store(&init_done, 1);
}

static void *racer(void *arg)
{
    CHECK_EQ(cap_once(&once, init), 0);
    CHECK_EQ(atomic_load(&init_done), 1);
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, racer, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&init_calls), 1);
    CHECK_EQ(cap_once(&once, init), 0);
    CHECK_EQ(atomic_load(&init_calls), 1);
    return 0;
}

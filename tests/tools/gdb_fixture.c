/* SPDX-License-Identifier: MIT */
/*
 * Description: not a test on its own: the program gdb_lists_threads.sh
 * runs under gdb. It leaves user threads in known states, then stops
 * itself with SIGTRAP so the debugger looks at a settled picture:
 *
 *   main      parked, join     (joins "trapper")
 *   sleeper   parked, sleep    (an hour-long cap_sleep_ns)
 *   joiner    parked, join     (joins "sleeper")
 *   yielder   runnable         (loops on cap_yield)
 *   newborn   runnable         (created, never started)
 *   trapper   running          (raises SIGTRAP)
 *
 * Determinism comes from running on one worker (CAP_WORKERS=1): threads
 * only switch when they block or yield, so once "trapper" runs and sees
 * every other thread's arrival mark, each of them has already parked or
 * yielded. No sleeps-and-hope.
 */
#include <capriccio.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { HOUR_NS = 3600ull * 1000 * 1000 * 1000 };

static atomic_int arrived; /* sleeper, joiner, yielder */
static cap_thread_t sleeper;

static cap_thread_t spawn(const char *name, void *(*fn)(void *))
{
    cap_thread_attr_t attr;
    cap_thread_t t;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setname(&attr, name), 0);
    CHECK_EQ(cap_thread_create(&t, &attr, fn, NULL), 0);
    return t;
}

static void *sleep_long(void *arg)
{
    atomic_fetch_add(&arrived, 1);
    cap_sleep_ns(HOUR_NS);
    return arg;
}

static void *join_sleeper(void *arg)
{
    atomic_fetch_add(&arrived, 1);
    CHECK_EQ(cap_thread_join(sleeper, NULL), 0);
    return arg;
}

static void *yield_forever(void *arg)
{
    atomic_fetch_add(&arrived, 1);
    for (;;)
        cap_yield();
    return arg;
}

static void *never_runs(void *arg)
{
    return arg;
}

static void *trap(void *arg)
{
    while (atomic_load(&arrived) < 3)
        cap_yield();
    spawn("newborn", never_runs);
    raise(SIGTRAP); /* gdb stops here; without gdb the process dies */
    return arg;
}

int main(void)
{
    if (cap_worker_count() != 1)
        SKIP("the fixture's states are deterministic with CAP_WORKERS=1 only");
    sleeper = spawn("sleeper", sleep_long);
    spawn("joiner", join_sleeper);
    spawn("yielder", yield_forever);
    cap_thread_t trapper = spawn("trapper", trap);
    CHECK_EQ(cap_thread_join(trapper, NULL), 0);
    return 0;
}

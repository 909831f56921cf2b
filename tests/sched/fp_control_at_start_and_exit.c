/* SPDX-License-Identifier: MIT */
/* Description: the floating-point control words survive the switches at
 * a thread's start and at its end. A joiner whose rounding mode differs
 * from its threads' keeps it when a thread starts (the switch into a fresh
 * context) and when one ends, whether its start function returns (the
 * last switch is made from the trampoline) or it calls cap_thread_exit;
 * each thread keeps the mode it set until it ends, and a detached thread's
 * end leaves the mode of whichever thread runs next alone. */
#include <capriccio.h>
#include <fenv.h>
#include <stdint.h>

#include "check.h"

enum { ROUNDS = 400 };

static const int modes[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };

static volatile float one = 1.0f, three = 3.0f;

static float third(void)
{
    return one / three;
}

/* arg: the mode index to set; odd ones end through cap_thread_exit. */
static void *set_mode_and_end(void *arg)
{
    intptr_t i = (intptr_t)arg;
    int mode = modes[i % 4];
    CHECK_EQ(fesetround(mode), 0);
    if (i % 3 == 0)
        cap_yield(); /* end after a switch as well as straight away */
    CHECK_EQ(fegetround(), mode);
    if (i % 2 == 1)
        cap_thread_exit((void *)(i + 1));
    return (void *)(i + 1);
}

int main(void)
{
    /* Results in different modes really differ, so the test can fail. */
    CHECK_EQ(fesetround(FE_UPWARD), 0);
    float up = third();
    CHECK_EQ(fesetround(FE_DOWNWARD), 0);
    float down = third();
    CHECK(up != down);

    for (intptr_t r = 0; r < ROUNDS; r++) {
        int mine = modes[(r / 4) % 4]; /* differs from the thread's 3 times in 4 */
        CHECK_EQ(fesetround(mine), 0);
        float expect = third();
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, set_mode_and_end, (void *)r), 0);
        if (r % 5 == 0)
            cap_yield(); /* let it start before the join, sometimes */
        void *ret;
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK(ret == (void *)(r + 1));
        CHECK_EQ(fegetround(), mine);
        CHECK(third() == expect);
    }

    /* Detached threads end with nobody to hand over to. */
    CHECK_EQ(fesetround(FE_TOWARDZERO), 0);
    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setdetachstate(&attr, CAP_CREATE_DETACHED), 0);
    for (intptr_t r = 0; r < 64; r++) {
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, &attr, set_mode_and_end, (void *)(r * 2)), 0);
        cap_yield();
        CHECK_EQ(fegetround(), FE_TOWARDZERO);
    }
    cap_sleep_ns(1000000);
    CHECK_EQ(fegetround(), FE_TOWARDZERO);
    CHECK_EQ(fesetround(FE_TONEAREST), 0);
    return 0;
}

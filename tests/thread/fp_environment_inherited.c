/* SPDX-License-Identifier: MIT */
/* Description: a new thread starts with its creator's floating-point
 * control words, as POSIX requires of pthread_create: the rounding mode
 * and the SSE exception masks, for fresh and recycled thread control
 * blocks, for threads created by threads with another mode, and on
 * whichever worker the thread starts. */
#include <capriccio.h>
#include <fenv.h>
#include <stdint.h>

#include "check.h"

enum { ROUNDS = 200 };

static const int modes[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };

/* Returns the rounding mode the thread started with. */
static void *report_mode(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)fegetround();
}

/* Sets mode arg, then creates a child and returns the child's mode. */
static void *create_in_mode(void *arg)
{
    int mode = modes[(intptr_t)arg % 4];
    CHECK_EQ(fesetround(mode), 0);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, report_mode, NULL), 0);
    void *ret;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ(fegetround(), mode);
    return ret;
}

/* Returns whether divide-by-zero was unmasked when the thread started. */
static void *report_divbyzero_trap(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)((fegetexcept() & FE_DIVBYZERO) != 0);
}

int main(void)
{
    for (intptr_t r = 0; r < ROUNDS; r++) {
        int mode = modes[r % 4];
        CHECK_EQ(fesetround(mode), 0);
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, report_mode, NULL), 0);
        if (r % 3 == 0)
            cap_yield(); /* started before the join, sometimes */
        void *ret;
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK_EQ((int)(intptr_t)ret, mode);

        /* A grandchild inherits from its own creator, not from main. */
        CHECK_EQ(cap_thread_create(&t, NULL, create_in_mode, (void *)(r + 1)), 0);
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK_EQ((int)(intptr_t)ret, modes[(r + 1) % 4]);
        CHECK_EQ(fegetround(), mode);
    }
    CHECK_EQ(fesetround(FE_TONEAREST), 0);

    /* Exception masks are inherited too (nothing here divides by zero). */
    CHECK_NE(feenableexcept(FE_DIVBYZERO), -1);
    cap_thread_t t;
    void *ret;
    CHECK_EQ(cap_thread_create(&t, NULL, report_divbyzero_trap, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((intptr_t)ret, 1);
    CHECK_NE(fedisableexcept(FE_DIVBYZERO), -1);
    CHECK_EQ(cap_thread_create(&t, NULL, report_divbyzero_trap, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((intptr_t)ret, 0);
    return 0;
}

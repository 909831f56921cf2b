/* SPDX-License-Identifier: MIT */
/* Description: the floating-point control words (SSE MXCSR and the x87
 * control word: rounding mode, exception masks) belong to the user thread:
 * a thread that changes its rounding mode keeps it across yields and
 * sleeps, and threads sharing its worker keep theirs. */
#include <capriccio.h>
#include <fenv.h>
#include <stdint.h>

#include "check.h"

enum { ROUNDS = 200 };

static const int modes[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };

/* 1/3 in single precision rounds differently in each mode; volatile keeps
 * the compiler from folding it at compile time. */
static volatile float one = 1.0f, three = 3.0f;

static void *keep_mode(void *arg)
{
    int mode = modes[(intptr_t)arg % 4];
    CHECK_EQ(fesetround(mode), 0);
    float expect = one / three;
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 10 == 0)
            cap_sleep_ns(1000);
        else
            cap_yield();
        CHECK_EQ(fegetround(), mode);
        float got = one / three;
        CHECK(got == expect);
        long double x87 = (long double)one / (long double)three; /* x87 path */
        CHECK(x87 > 0.0L);
    }
    return NULL;
}

int main(void)
{
    cap_thread_t t[16];
    for (intptr_t i = 0; i < 16; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, keep_mode, (void *)i), 0);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(fegetround(), FE_TONEAREST); /* main never changed its own */
    /* Results in different modes really differ, so the test can fail. */
    CHECK_EQ(fesetround(FE_UPWARD), 0);
    float up = one / three;
    CHECK_EQ(fesetround(FE_DOWNWARD), 0);
    float down = one / three;
    CHECK(up != down);
    CHECK_EQ(fesetround(FE_TONEAREST), 0);
    return 0;
}

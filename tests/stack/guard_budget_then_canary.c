/* SPDX-License-Identifier: MIT */
/* Description: with mprotect guards (the path for kernels without
 * MADV_GUARD_INSTALL) and a VMA budget of 20, the first 10 stacks get a
 * guard page and the rest a canary; threads on both kinds run, switch and
 * exit normally (the canary check at every switch finds nothing). */
#include <capriccio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { THREADS = 40, ROUNDS = 50 };

static void *worker(void *arg)
{
    volatile char buf[2048];
    for (int i = 0; i < ROUNDS; i++) {
        memset((char *)buf, i, sizeof buf);
        cap_yield();
        cap_usleep(1);
    }
    return arg;
}

int main(void)
{
    if (getenv("CAP_STACK_GUARD_VMAS") == NULL)
        SKIP("run by ctest with CAP_STACK_GUARD=mprotect CAP_STACK_GUARD_VMAS=20");
    cap_thread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, worker, (void *)i), 0);
    for (long i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK_EQ((long)ret, i);
    }
    cap_stack_stats_t st;
    CHECK_EQ(cap_stack_stats(&st), 0);
    CHECK_EQ(st.guards_madvise, 0);
    CHECK_EQ(st.guards_mprotect, 10);
    CHECK_EQ(st.guards_canary, st.stacks_carved - 10);
    CHECK_GE(st.guards_canary, THREADS + 1 - 10 - 1);
    return 0;
}

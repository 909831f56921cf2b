/* SPDX-License-Identifier: MIT */
/* Not a test by itself: gdb_backtrace.py runs it under gdb, stops in
 * bottom() at the end of a 40-level recursion that spans about ten linked
 * chunks (CAP_LINKED_FIRST=4K), and checks that `bt` walks through every
 * __morestack frame back to the thread's entry. Also checks the unwinder
 * the library itself (and C++) would use: _Unwind_Backtrace from bottom()
 * counts the frames, and the program exits 1 if it stops early. */
#include <stdio.h>
#include <unwind.h>

#include "linked_util.h"

enum { DEPTH = 40 };

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *arg)
{
    (*(int *)arg)++;
    return _URC_NO_REASON;
}

__attribute__((noinline)) long bottom(long x)
{
    int frames = 0;
    _Unwind_Backtrace(count_frame, &frames);
    printf("unwound %d frames\n", frames);
    fflush(stdout);
    return frames > DEPTH ? 0 : 1;
}

static void *diver(void *arg)
{
    return (void *)dive(DEPTH, bottom, 0);
}

int main(void)
{
    cap_thread_t t;
    void *ret;
    CHECK_EQ(cap_thread_create(&t, NULL, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((long)ret, 0);
    CHECK_GE(stats().chunks_linked, 5);
    return 0;
}

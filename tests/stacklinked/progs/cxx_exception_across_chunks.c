/* SPDX-License-Identifier: MIT */
/* Description: an exception thrown from deep inside linked chunks and
 * caught near the top (here _Unwind_ForcedUnwind, the same two-phase
 * unwinder C++ throw uses, driven from C) passes through every __morestack
 * frame, whose cleanup unlinks its chunk: afterwards no chunk is linked,
 * the limit is the first chunk's again, and a hundred round trips map no
 * more chunks than one dive. (cxx_throw.cpp checks real C++ throw/catch
 * when a C++ compiler is there.) */
#include <setjmp.h>
#include <stdio.h>
#include <unwind.h>

#include "linked_util.h"

enum { DEPTH = 100, TRIPS = 100 };

static jmp_buf catcher;
static struct _Unwind_Exception exc;

/* Stops the forced unwind at the frame that set the catcher: when the
 * unwinder reaches the end of the stack or our marker depth, longjmp out
 * (what a catch does, minus the type matching). */
static _Unwind_Reason_Code stop(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
                                struct _Unwind_Exception *e, struct _Unwind_Context *ctx,
                                void *arg)
{
    uintptr_t cfa = _Unwind_GetCFA(ctx);
    if ((actions & _UA_END_OF_STACK) || cfa >= (uintptr_t)arg)
        longjmp(catcher, 1);
    return _URC_NO_REASON;
}

static char *top_frame;

static long throw_up(long x)
{
    exc.exception_class = 0x4341502d43000000ull; /* "CAP-C" */
    exc.exception_cleanup = NULL;
    _Unwind_ForcedUnwind(&exc, stop, top_frame);
    return -1; /* not reached */
}

static __attribute__((noinline)) void round_trip(void)
{
    volatile char here;
    top_frame = (char *)&here;
    if (setjmp(catcher) == 0)
        dive(DEPTH, throw_up, 0);
}

static void *run(void *arg)
{
    uintptr_t limit0 = stack_limit();
    for (int i = 0; i < TRIPS; i++) {
        cap_stack_stats_t before = stats();
        round_trip();
        cap_stack_stats_t after = stats();
        CHECK_EQ(stack_limit(), limit0);
        CHECK_GT(after.chunks_linked, before.chunks_linked);
        CHECK_EQ(after.chunks_linked - before.chunks_linked,
                 after.chunks_unlinked - before.chunks_unlinked);
    }
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu unlinks, %llu chunks mapped\n",
            (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_unlinked,
            (unsigned long long)st.chunks_mapped);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_LE(st.chunks_mapped, DEPTH * 1000 / 2048 + 8);
    return 0;
}

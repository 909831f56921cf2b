/* SPDX-License-Identifier: MIT */
/* Description: longjmp from deep inside linked chunks back to a frame on
 * the first chunk unlinks every chunk in between and restores the first
 * chunk's limit: a hundred round trips leave no chunk linked and map no
 * more chunks than one dive needs. Also siglongjmp, and __longjmp_chk (what
 * longjmp becomes with _FORTIFY_SOURCE), whose stack check must not
 * mistake an older chunk at a lower address for an uninitialized frame. */
#include <setjmp.h>
#include <stdio.h>

#include "linked_util.h"

enum { DEPTH = 200, TRIPS = 100 };

static jmp_buf env;
static sigjmp_buf senv;

void __longjmp_chk(jmp_buf env, int val) __attribute__((noreturn));

static long jump_out(long how)
{
    if (how == 1)
        longjmp(env, 1);
    if (how == 3)
        __longjmp_chk(env, 1);
    siglongjmp(senv, 1);
}

static void *jumper(void *arg)
{
    uintptr_t limit0 = stack_limit();
    for (volatile int i = 0; i < TRIPS; i++) {
        if (setjmp(env) == 0)
            dive(DEPTH, jump_out, 1);
        CHECK_EQ(stack_limit(), limit0);
        if (sigsetjmp(senv, 1) == 0)
            dive(DEPTH, jump_out, 2);
        CHECK_EQ(stack_limit(), limit0);
        if (setjmp(env) == 0)
            dive(DEPTH, jump_out, 3);
        CHECK_EQ(stack_limit(), limit0);
    }
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, jumper, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu unlinks, %llu chunks mapped\n",
            (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_unlinked,
            (unsigned long long)st.chunks_mapped);
    CHECK_GE(st.chunks_linked, 3 * TRIPS * (DEPTH * 1000 / 4096));
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_LE(st.chunks_mapped, DEPTH * 1000 / 2048 + 8);
    return 0;
}

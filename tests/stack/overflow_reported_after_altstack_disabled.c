/* SPDX-License-Identifier: MIT */
/* Description: a thread's sigaltstack(SS_DISABLE), as a thread makes
 * before freeing its own alternate stack, does not take the worker's
 * alternate stack from the runtime: a later overflow of another thread of
 * that worker is still reported (death by SIGABRT with the report). The
 * disabling thread is told SS_DISABLE afterwards, and a bad request still
 * fails as the kernel says (EINVAL). On the old library the disable left
 * the worker with none, and the overflow killed the process by SIGSEGV
 * with no report. One worker, so both threads share it. */
#include <capriccio.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "child.h"

#pragma GCC diagnostic ignored "-Winfinite-recursion" /* the point of the test */
/* Each call writes the lowest byte of its frame and calls on: the fault
 * comes with the stack pointer in the guard, where the kernel finds no
 * room for a signal frame unless an alternate stack is set. */
__attribute__((noinline, optimize("O0"))) static int dive(int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    return dive(depth + 1) + frame[0];
}

static void *diver(void *arg)
{
    return (void *)(long)dive(0);
}

static void *disabler(void *arg)
{
    (void)arg;
    stack_t off = { .ss_flags = SS_DISABLE }, cur;
    CHECK_EQ(sigaltstack(&off, NULL), 0);
    CHECK_EQ(sigaltstack(NULL, &cur), 0);
    CHECK_EQ(cur.ss_flags, SS_DISABLE);
    static char own[64 * 1024];
    stack_t bad = { .ss_sp = own, .ss_size = sizeof own, .ss_flags = 12345 };
    CHECK_EQ(sigaltstack(&bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sigaltstack(NULL, &cur), 0);
    CHECK_EQ(cur.ss_flags, SS_DISABLE);
    return NULL;
}

static int child(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, disabler, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_thread_attr_t attr;
    cap_thread_attr_init(&attr);
    cap_thread_attr_setname(&attr, "deep-diver");
    CHECK_EQ(cap_thread_create(&t, &attr, diver, NULL), 0);
    cap_thread_join(t, NULL);
    fprintf(stderr, "the diver returned?\n");
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    static char out[16384];
    const char *env[] = { "CAP_WORKERS=1", NULL };
    int status = run_child("child", env, out, sizeof out);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
        fprintf(stderr, "child status %#x, wanted death by SIGABRT; its stderr:\n%s\n", status,
                out);
        return 1;
    }
    CHECK_CONTAINS(out, "capriccio: stack overflow in thread ");
    CHECK_CONTAINS(out, "name \"deep-diver\"");
    return 0;
}

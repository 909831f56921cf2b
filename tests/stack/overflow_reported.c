/* SPDX-License-Identifier: MIT */
/* Description: a thread that recurses past the end of its stack kills the
 * process with a report naming the thread, its creation site and its stack
 * size, whether the stack is protected by MADV_GUARD_INSTALL, by an
 * mprotect guard or (past the VMA budget) by a canary checked at switches. */
#include <capriccio.h>
#include <signal.h>
#include <stdio.h>

#include "child.h"

#pragma GCC diagnostic ignored "-Winfinite-recursion" /* the point of the test */
static int dive(int depth)
{
    volatile char frame[512];
    for (size_t i = 0; i < sizeof frame; i += 64)
        frame[i] = (char)(depth | 1);
    /* Switch now and then: a canary stack is checked at switches. */
    if (depth % 4 == 0)
        cap_usleep(1);
    return dive(depth + 1) + frame[0];
}

static void *diver(void *arg)
{
    return (void *)(long)dive(0);
}

static void *sleeper(void *arg)
{
    cap_usleep(60 * 1000 * 1000);
    return arg;
}

static int child(void)
{
    cap_thread_attr_t attr;
    cap_thread_attr_init(&attr);
    cap_thread_attr_setstacksize(&attr, 64 * 1024);
    cap_thread_t t;
    /* With a canary, the overflow is seen only at the diver's next switch,
     * after it has written into the stack below its own. Make that the
     * stack of a parked thread, not a worker's live scheduler stack. */
    CHECK_EQ(cap_thread_create(&t, &attr, sleeper, NULL), 0);
    cap_thread_attr_setname(&attr, "deep-diver");
    CHECK_EQ(cap_thread_create(&t, &attr, diver, NULL), 0);
    cap_thread_join(t, NULL);
    fprintf(stderr, "the diver returned?\n");
    return 3;
}

static void expect_report(const char *guard_env)
{
    static char out[16384];
    const char *env[] = { guard_env, NULL };
    int status = run_child("child", env, out, sizeof out);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
        fprintf(stderr, "%s: child status %#x, wanted death by SIGABRT; its stderr:\n%s\n",
                guard_env, status, out);
        exit(1);
    }
    CHECK_CONTAINS(out, "capriccio: stack overflow in thread ");
    CHECK_CONTAINS(out, "name \"deep-diver\"");
    CHECK_CONTAINS(out, "created at: ");
    CHECK_CONTAINS(out, "overflow_reported");
    CHECK_CONTAINS(out, "  stack: 6"); /* 65536, or 65472 with a canary */
    fprintf(stderr, "%s: ok\n", guard_env);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    expect_report("CAP_STACK_GUARD=auto");
    expect_report("CAP_STACK_GUARD=mprotect");
    expect_report("CAP_STACK_GUARD=canary");
    return 0;
}

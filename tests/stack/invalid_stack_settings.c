/* SPDX-License-Identifier: MIT */
/* Description: an invalid stack setting stops the program at start-up
 * with exit status 2 and a message naming the variable and the valid
 * values; never a silent default. */
#include <capriccio.h>
#include <stdio.h>

#include "child.h"

static void expect_rejected(const char *setting, const char *var)
{
    static char out[4096];
    const char *env[] = { setting, NULL };
    int status = run_child("child", env, out, sizeof out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2) {
        fprintf(stderr, "%s: status %#x, wanted exit 2; stderr:\n%s\n", setting, status, out);
        exit(1);
    }
    CHECK_CONTAINS(out, var);
    CHECK_CONTAINS(out, "valid values");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return 0;
    expect_rejected("CAP_STACK_TRIM=1000", "CAP_STACK_TRIM");
    expect_rejected("CAP_STACK_TRIM=lots", "CAP_STACK_TRIM");
    expect_rejected("CAP_STACK_GUARD=yes", "CAP_STACK_GUARD");
    expect_rejected("CAP_STACK_GUARD_VMAS=-1", "CAP_STACK_GUARD_VMAS");
    expect_rejected("CAP_STACK_STATS=2", "CAP_STACK_STATS");
    expect_rejected("CAP_LINKED=1", "CAP_LINKED"); /* not a linked program */
    expect_rejected("CAP_LINKED_MINCHUNK=3000", "CAP_LINKED_MINCHUNK");
    expect_rejected("CAP_LINKED_FIRST=1K", "CAP_LINKED_FIRST");
    expect_rejected("CAP_LINKED_EXTERNAL=big", "CAP_LINKED_EXTERNAL");
    static char out[4096];
    const char *ok[] = { "CAP_STACK_TRIM=off", "CAP_STACK_GUARD=canary", "CAP_LINKED=0",
                         "CAP_LINKED_MINCHUNK=8K", NULL };
    CHECK_EQ(run_child("child", ok, out, sizeof out), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: on a canary-guarded stack (CAP_STACK_GUARD=canary, or the
 * mprotect budget spent), what cap_thread_getattr and cap_thread_getstack
 * report (pthread_getattr_np) is the stack the thread was given: a thread
 * asked for CAP_STACK_MIN bytes is reported with CAP_STACK_MIN, the
 * region holds its frames, and an attribute object read back this way
 * creates a sibling (as with glibc). It used to report 64 bytes less (the
 * canary zone left out), below CAP_STACK_MIN, so the create failed with
 * EINVAL. */
#include <capriccio.h>
#include <errno.h>

#include "check.h"

static void *nothing(void *arg)
{
    return arg;
}

static void *check_own(void *arg)
{
    (void)arg;
    cap_thread_attr_t now;
    void *lo;
    size_t size;
    char local;
    CHECK_EQ(cap_thread_getattr(cap_thread_self(), &now), 0);
    CHECK_EQ(now.stack_size, CAP_STACK_MIN);
    CHECK_EQ(cap_thread_getstack(cap_thread_self(), &lo, &size), 0);
    CHECK_EQ(size, now.stack_size);
    CHECK(&local >= (char *)lo && &local < (char *)lo + size);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, &now, nothing, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    return NULL;
}

int main(void)
{
    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, CAP_STACK_MIN), 0);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, &attr, check_own, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    return 0;
}

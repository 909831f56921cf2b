/* SPDX-License-Identifier: MIT */
/* Description: join and detach report the POSIX errors: EDEADLK on
 * self-join, EINVAL on a detached thread and on a second joiner, ESRCH on
 * a stale or made-up handle; detach of a finished thread reclaims it. */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>

#include "check.h"

static cap_thread_t target;
static int second_join_rc = -1;

static void *nothing(void *arg)
{
    return arg;
}

static void *wait_a_while(void *arg)
{
    for (int i = 0; i < 50; i++)
        cap_yield();
    return arg;
}

static void *join_target(void *arg)
{
    second_join_rc = cap_thread_join(target, NULL);
    return arg;
}

static void *self_join(void *arg)
{
    return (void *)(intptr_t)cap_thread_join(cap_thread_self(), NULL);
}

int main(void)
{
    cap_thread_t t;
    void *ret;

    CHECK_EQ(cap_thread_join(cap_thread_self(), NULL), EDEADLK);
    CHECK_EQ(cap_thread_create(&t, NULL, self_join, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((intptr_t)ret, EDEADLK);

    /* A joined handle is stale from then on. */
    CHECK_EQ(cap_thread_create(&t, NULL, nothing, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), ESRCH);
    CHECK_EQ(cap_thread_detach(t), ESRCH);
    CHECK_EQ(cap_thread_join(0, NULL), ESRCH);
    CHECK_EQ(cap_thread_join((cap_thread_t)0x7777777700001234ull, NULL), ESRCH);

    /* The slot of a joined thread is reused, but the old handle still
     * names nothing. */
    cap_thread_t old = t;
    CHECK_EQ(cap_thread_create(&t, NULL, wait_a_while, NULL), 0);
    CHECK_NE(t, old);
    CHECK_EQ(cap_thread_join(old, NULL), ESRCH);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    /* Detached: join is EINVAL, detach twice is EINVAL. */
    CHECK_EQ(cap_thread_create(&t, NULL, wait_a_while, NULL), 0);
    CHECK_EQ(cap_thread_detach(t), 0);
    int rc = cap_thread_detach(t);
    CHECK(rc == EINVAL || rc == ESRCH); /* ESRCH if it already finished */
    rc = cap_thread_join(t, NULL);
    CHECK(rc == EINVAL || rc == ESRCH);

    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setdetachstate(&attr, CAP_CREATE_DETACHED), 0);
    CHECK_EQ(cap_thread_create(&t, &attr, wait_a_while, NULL), 0);
    rc = cap_thread_join(t, NULL);
    CHECK(rc == EINVAL || rc == ESRCH);

    /* A second joiner gets EINVAL while the first waits. */
    CHECK_EQ(cap_thread_create(&target, NULL, wait_a_while, (void *)42), 0);
    cap_thread_t other;
    CHECK_EQ(cap_thread_create(&other, NULL, join_target, NULL), 0);
    for (int i = 0; i < 5 && second_join_rc == -1; i++)
        cap_yield();
    /* Whichever join comes second must fail with EINVAL. */
    rc = cap_thread_join(target, &ret);
    CHECK_EQ(cap_thread_join(other, NULL), 0);
    if (rc == 0) {
        CHECK_EQ((intptr_t)ret, 42);
        CHECK(second_join_rc == EINVAL || second_join_rc == ESRCH);
    } else {
        /* The other joiner won: EINVAL while it waited, ESRCH after. */
        CHECK(rc == EINVAL || rc == ESRCH);
        CHECK_EQ(second_join_rc, 0);
    }

    /* Detaching a finished, unjoined thread reclaims it at once. Only on
     * one worker can we know without a join that it has finished: a yield
     * there runs it to completion. */
    if (cap_worker_count() == 1) {
        CHECK_EQ(cap_thread_create(&t, NULL, nothing, NULL), 0);
        cap_yield();
        CHECK_EQ(cap_thread_detach(t), 0);
        CHECK_EQ(cap_thread_join(t, NULL), ESRCH);
        cap_thread_t reuse; /* the reclaimed slot is the next one handed out */
        CHECK_EQ(cap_thread_create(&reuse, NULL, nothing, NULL), 0);
        CHECK_EQ((uint32_t)reuse, (uint32_t)t);
        CHECK_EQ(cap_thread_join(reuse, NULL), 0);
    }
    return 0;
}

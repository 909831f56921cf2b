/* SPDX-License-Identifier: MIT */
/* Description: several threads each create and join children in a tight
 * loop, so a TCB is released and reused at once: the exiting child's
 * hand-off to its joiner, the per-worker TCB cache (with two stack sizes
 * mixed, so cached stacks of the wrong size are passed over), children
 * that finish on another worker while their joiner parks, and detached
 * children in between. Every return value must reach its joiner, and
 * nothing may hang (a lost wake-up ends in the deadlock report). */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>

#include "check.h"

enum { PARENTS = 6, ROUNDS = 20000 };

static void *plus_one(void *arg)
{
    intptr_t v = (intptr_t)arg;
    if (v % 5 == 0)
        cap_yield(); /* the joiner parks before the child exits */
    return (void *)(v + 1);
}

static void *detached_child(void *arg)
{
    (void)arg;
    return NULL;
}

static void *parent(void *arg)
{
    intptr_t id = (intptr_t)arg;
    cap_thread_attr_t small, detached;
    CHECK_EQ(cap_thread_attr_init(&small), 0);
    CHECK_EQ(cap_thread_attr_setstacksize(&small, 32 * 1024), 0);
    CHECK_EQ(cap_thread_attr_init(&detached), 0);
    CHECK_EQ(cap_thread_attr_setdetachstate(&detached, CAP_CREATE_DETACHED), 0);
    for (intptr_t i = 0; i < ROUNDS; i++) {
        intptr_t v = id * ROUNDS + i;
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, i % 3 == 0 ? &small : NULL, plus_one, (void *)v), 0);
        void *ret;
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK_EQ((intptr_t)ret, v + 1);
        /* The handle is stale now, even if its TCB was reused at once. */
        CHECK_EQ(cap_thread_join(t, &ret), ESRCH);
        if (i % 7 == 0) {
            cap_thread_t d;
            CHECK_EQ(cap_thread_create(&d, &detached, detached_child, NULL), 0);
        }
    }
    return (void *)id;
}

int main(void)
{
    cap_thread_t parents[PARENTS];
    for (intptr_t p = 0; p < PARENTS; p++)
        CHECK_EQ(cap_thread_create(&parents[p], NULL, parent, (void *)p), 0);
    for (intptr_t p = 0; p < PARENTS; p++) {
        void *ret;
        CHECK_EQ(cap_thread_join(parents[p], &ret), 0);
        CHECK_EQ((intptr_t)ret, p);
    }
    return 0;
}

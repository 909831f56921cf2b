/* SPDX-License-Identifier: MIT */
/* Description: cleanup handlers run innermost first when a thread is
 * cancelled at cap_testcancel; handlers popped with execute=0 do not run,
 * pop(1) runs one at once; cap_thread_exit runs the remaining handlers
 * too, before the thread-specific data destructors. */
#include "util.h"

static char order[16];
static int n;
static cap_key_t key;

static void rec(void *arg)
{
    order[n++] = (char)(intptr_t)arg;
}

static void destructor(void *arg)
{
    (void)arg;
    order[n++] = 'K';
}

static void *cancelled(void *arg)
{
    (void)arg;
    cap_cleanup_push(rec, (void *)'a');
    cap_cleanup_push(rec, (void *)'b');
    cap_cleanup_push(rec, (void *)'x');
    cap_cleanup_pop(0); /* x: dropped */
    cap_cleanup_push(rec, (void *)'y');
    cap_cleanup_pop(1); /* y: runs now */
    cap_cleanup_push(rec, (void *)'c');
    CHECK_EQ(cap_setspecific(key, (void *)1), 0);
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    order[n++] = '|'; /* cancel is deferred: we get here */
    for (;;)
        cap_testcancel();
    cap_cleanup_pop(0);
    cap_cleanup_pop(0);
    cap_cleanup_pop(0);
    return NULL;
}

static void *exits(void *arg)
{
    (void)arg;
    cap_cleanup_push(rec, (void *)'1');
    cap_cleanup_push(rec, (void *)'2');
    CHECK_EQ(cap_setspecific(key, (void *)1), 0);
    cap_thread_exit((void *)7);
    cap_cleanup_pop(0);
    cap_cleanup_pop(0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_key_create(&key, destructor), 0);
    CHECK(join(spawn(cancelled, NULL)) == CAP_CANCELED);
    order[n] = 0;
    CHECK_EQ(strcmp(order, "y|cbaK"), 0);
    n = 0;
    CHECK_EQ((intptr_t)join(spawn(exits, NULL)), 7);
    order[n] = 0;
    CHECK_EQ(strcmp(order, "21K"), 0);
    return 0;
}

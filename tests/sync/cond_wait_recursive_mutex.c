/* SPDX-License-Identifier: MIT */
/* Description: a condition wait on a RECURSIVE mutex held three deep
 * releases it completely (another thread can lock it) and gives it back
 * at the same depth (three unlocks, then the fourth is EPERM). */
#include "util.h"

static cap_mutex_t r = CAP_MUTEX_RECURSIVE_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int ready;

static void *other(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&r), 0); /* only possible if the waiter let go */
    ready = 1;
    CHECK_EQ(cap_cond_signal(&c), 0);
    CHECK_EQ(cap_mutex_unlock(&r), 0);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cap_mutex_lock(&r), 0);
    cap_thread_t t = spawn(other, NULL);
    while (!ready)
        CHECK_EQ(cap_cond_wait(&c, &r), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cap_mutex_unlock(&r), 0);
    CHECK_EQ(cap_mutex_unlock(&r), EPERM);
    join(t);
    return 0;
}

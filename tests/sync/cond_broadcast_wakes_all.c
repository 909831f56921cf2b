/* SPDX-License-Identifier: MIT */
/* Description: one broadcast wakes every one of 3,000 threads blocked on a
 * condition variable; the predicate is set once, so a lost wake-up would
 * leave a thread blocked forever (the test would time out). */
#include "util.h"

enum { THREADS = 3000 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int waiting, go, woken;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    waiting++;
    while (!go)
        CHECK_EQ(cap_cond_wait(&c, &m), 0);
    woken++;
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(waiter, NULL);
    for (;;) { /* until every waiter has released m inside cond_wait */
        CHECK_EQ(cap_mutex_lock(&m), 0);
        int n = waiting;
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        if (n == THREADS)
            break;
        cap_yield();
    }
    CHECK_EQ(cap_mutex_lock(&m), 0);
    go = 1;
    CHECK_EQ(cap_cond_broadcast(&c), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(woken, THREADS);
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

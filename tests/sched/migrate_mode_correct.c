/* SPDX-License-Identifier: MIT */
/* Description: with CAP_MIGRATE=1 (threads may move between workers) the
 * runtime stays correct: joins, sleeps, yields and errno across thousands
 * of threads give exact results.
 *
 * errno is read and written through non-inlined accessors: with migration
 * the compiler may otherwise keep __errno_location()'s result (glibc
 * declares it const) across the yield and use the old kernel thread's
 * slot -- the caveat documented in the README, which this test hit before
 * it used the accessors. */
#include <capriccio.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { THREADS = 2000, ROUNDS = 30 };

static atomic_long total;

__attribute__((noinline)) static void set_errno(int v)
{
    errno = v;
}

__attribute__((noinline)) static int get_errno(void)
{
    return errno;
}

static void *work(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        set_errno((int)(id + r));
        if (r % 5 == 0)
            cap_sleep_ns(5000);
        else
            cap_yield();
        CHECK_EQ(get_errno(), (int)(id + r));
        atomic_fetch_add(&total, 1);
    }
    return (void *)id;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, work, (void *)i), 0);
    for (intptr_t i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK_EQ((intptr_t)ret, i);
    }
    CHECK_EQ(atomic_load(&total), (long)THREADS * ROUNDS);
    return 0;
}

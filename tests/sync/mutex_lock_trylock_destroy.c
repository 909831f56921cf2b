/* SPDX-License-Identifier: MIT */
/* Description: a NORMAL mutex excludes other threads (trylock EBUSY while
 * held, 0 once free), the static initializer and cap_mutex_init give the
 * same free mutex, and destroy says EBUSY while it is locked. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;

static void *try_it(void *arg)
{
    return (void *)(intptr_t)cap_mutex_trylock(arg);
}

int main(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ((intptr_t)join(spawn(try_it, &m)), EBUSY);
    CHECK_EQ(cap_mutex_destroy(&m), EBUSY);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK_EQ((intptr_t)join(spawn(try_it, &m)), 0); /* it now holds m */
    CHECK_EQ(cap_mutex_trylock(&m), EBUSY);
    CHECK_EQ(cap_mutex_unlock(&m), 0); /* NORMAL: anyone may unlock */
    CHECK_EQ(cap_mutex_destroy(&m), 0);

    cap_mutex_t d;
    CHECK_EQ(cap_mutex_init(&d, NULL), 0);
    CHECK_EQ(cap_mutex_trylock(&d), 0);
    CHECK_EQ(cap_mutex_trylock(&d), EBUSY); /* a NORMAL mutex does not recurse */
    CHECK_EQ(cap_mutex_unlock(&d), 0);
    CHECK_EQ(cap_mutex_unlock(&d), EPERM); /* not locked */
    CHECK_EQ(cap_mutex_destroy(&d), 0);
    CHECK_EQ(cap_mutex_init(NULL, NULL), EINVAL);
    return 0;
}

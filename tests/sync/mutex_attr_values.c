/* SPDX-License-Identifier: MIT */
/* Description: mutex attributes keep what POSIX defines, and refuse what a
 * user-level mutex cannot do: process-shared, priority inheritance and
 * protection, robustness (ENOTSUP), and values out of range (EINVAL). */
#include "util.h"

int main(void)
{
    cap_mutexattr_t a;
    int v = -1;
    CHECK_EQ(cap_mutexattr_init(&a), 0);
    CHECK_EQ(cap_mutexattr_gettype(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_DEFAULT);
    CHECK_EQ(cap_mutexattr_settype(&a, 42), EINVAL);
    CHECK_EQ(cap_mutexattr_settype(&a, CAP_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(cap_mutexattr_gettype(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_ERRORCHECK);

    CHECK_EQ(cap_mutexattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_PRIVATE);
    CHECK_EQ(cap_mutexattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_mutexattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_SHARED);
    CHECK_EQ(cap_mutexattr_setpshared(&a, 7), EINVAL);
    CHECK_EQ(cap_mutexattr_setpshared(&a, CAP_PROCESS_PRIVATE), 0);

    CHECK_EQ(cap_mutexattr_getprotocol(&a, &v), 0);
    CHECK_EQ(v, CAP_PRIO_NONE);
    CHECK_EQ(cap_mutexattr_setprotocol(&a, CAP_PRIO_INHERIT), 0); /* one priority: no effect */
    CHECK_EQ(cap_mutexattr_getprotocol(&a, &v), 0);
    CHECK_EQ(v, CAP_PRIO_INHERIT);
    CHECK_EQ(cap_mutexattr_setprotocol(&a, CAP_PRIO_PROTECT), ENOTSUP);
    CHECK_EQ(cap_mutexattr_setprotocol(&a, 9), EINVAL);
    CHECK_EQ(cap_mutexattr_setprotocol(&a, CAP_PRIO_NONE), 0);
    CHECK_EQ(cap_mutexattr_getprotocol(&a, &v), 0);
    CHECK_EQ(v, CAP_PRIO_NONE);

    CHECK_EQ(cap_mutexattr_setprioceiling(&a, 5), 0);
    CHECK_EQ(cap_mutexattr_getprioceiling(&a, &v), 0);
    CHECK_EQ(v, 5);

    CHECK_EQ(cap_mutexattr_getrobust(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_STALLED);
    CHECK_EQ(cap_mutexattr_setrobust(&a, CAP_MUTEX_ROBUST), 0);
    CHECK_EQ(cap_mutexattr_getrobust(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_ROBUST);
    CHECK_EQ(cap_mutexattr_setrobust(&a, 3), EINVAL);
    CHECK_EQ(cap_mutexattr_getrobust(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_ROBUST);
    CHECK_EQ(cap_mutexattr_setrobust(&a, CAP_MUTEX_STALLED), 0);
    CHECK_EQ(cap_mutexattr_getrobust(&a, &v), 0);
    CHECK_EQ(v, CAP_MUTEX_STALLED);

    cap_mutex_t m;
    CHECK_EQ(cap_mutex_init(&m, &a), 0); /* ERRORCHECK, as set above */
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    CHECK_EQ(cap_mutexattr_destroy(&a), 0);
    CHECK_EQ(cap_mutexattr_init(NULL), EINVAL);
    return 0;
}

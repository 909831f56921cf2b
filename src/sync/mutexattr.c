/* SPDX-License-Identifier: MIT */
/*
 * Mutex attributes. Only what a user-level mutex can honour is accepted:
 * priority protection is refused with ENOTSUP (POSIX's error for a valid
 * but unsupported value: it needs priorities), out-of-range values with
 * EINVAL. Priority inheritance is accepted and changes nothing: every
 * user thread has the one priority SCHED_OTHER allows, so no holder is
 * ever lower than a waiter to be raised (a program asks for it with its
 * robust shared mutexes, as APR's process mutex does). Robust and
 * process-shared mutexes are honoured (mutex.c, robust.c).
 */
#include <errno.h>

#include "sync/sync.h"

int cap_mutexattr_init(cap_mutexattr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    *attr = (cap_mutexattr_t){ .type = CAP_MUTEX_DEFAULT,
                               .pshared = CAP_PROCESS_PRIVATE,
                               .protocol = CAP_PRIO_NONE,
                               .robust = CAP_MUTEX_STALLED,
                               .prioceiling = 0 };
    return 0;
}

int cap_mutexattr_destroy(cap_mutexattr_t *attr)
{
    return attr == NULL ? EINVAL : 0;
}

int cap_mutexattr_settype(cap_mutexattr_t *attr, int type)
{
    if (attr == NULL || (type != CAP_MUTEX_NORMAL && type != CAP_MUTEX_RECURSIVE &&
                         type != CAP_MUTEX_ERRORCHECK))
        return EINVAL;
    attr->type = type;
    return 0;
}

int cap_mutexattr_gettype(const cap_mutexattr_t *attr, int *type)
{
    if (attr == NULL || type == NULL)
        return EINVAL;
    *type = attr->type;
    return 0;
}

int cap_mutexattr_setpshared(cap_mutexattr_t *attr, int pshared)
{
    if (attr == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        attr->pshared = pshared;
    return rc;
}

int cap_mutexattr_getpshared(const cap_mutexattr_t *attr, int *pshared)
{
    if (attr == NULL || pshared == NULL)
        return EINVAL;
    *pshared = attr->pshared;
    return 0;
}

int cap_mutexattr_setprotocol(cap_mutexattr_t *attr, int protocol)
{
    if (attr == NULL)
        return EINVAL;
    if (protocol == CAP_PRIO_PROTECT)
        return ENOTSUP;
    if (protocol != CAP_PRIO_NONE && protocol != CAP_PRIO_INHERIT)
        return EINVAL;
    attr->protocol = protocol;
    return 0;
}

int cap_mutexattr_getprotocol(const cap_mutexattr_t *attr, int *protocol)
{
    if (attr == NULL || protocol == NULL)
        return EINVAL;
    *protocol = attr->protocol;
    return 0;
}

int cap_mutexattr_setprioceiling(cap_mutexattr_t *attr, int prioceiling)
{
    if (attr == NULL)
        return EINVAL;
    attr->prioceiling = prioceiling;
    return 0;
}

int cap_mutexattr_getprioceiling(const cap_mutexattr_t *attr, int *prioceiling)
{
    if (attr == NULL || prioceiling == NULL)
        return EINVAL;
    *prioceiling = attr->prioceiling;
    return 0;
}

int cap_mutexattr_setrobust(cap_mutexattr_t *attr, int robust)
{
    if (attr == NULL)
        return EINVAL;
    if (robust != CAP_MUTEX_STALLED && robust != CAP_MUTEX_ROBUST)
        return EINVAL;
    attr->robust = robust;
    return 0;
}

int cap_mutexattr_getrobust(const cap_mutexattr_t *attr, int *robust)
{
    if (attr == NULL || robust == NULL)
        return EINVAL;
    *robust = attr->robust;
    return 0;
}

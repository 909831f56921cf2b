/* SPDX-License-Identifier: MIT */
/*
 * The process's default thread attributes (GNU's
 * pthread_setattr_default_np): what cap_thread_create uses when it is
 * given no attribute (and thrd_create, which never is).
 *
 * Invariants: `stored` is read and written only under `lock`, and is
 * valid (a stack size of 0 or within CAP_STACK_MIN..CAP_STACK_MAX, a
 * known detach state). `changed` is set once, after the first store: a
 * create with no attribute in a program that never set the default pays
 * one load, no lock. A stored stack size of 0 means CAP_STACK_SIZE's.
 * fork holds `lock` across the fork (intercept/handover.c), so a child
 * never inherits it taken by a kernel thread it does not have; but for a
 * fork made by a signal handler that interrupted its holder on the same
 * kernel thread (util/ownspin.h), whose child holds it as the parent
 * does, until the interrupted code goes on.
 */
#include "thread/thread.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/ownspin.h"

static cap__ownspin lock = CAP__OWNSPIN_INIT;
static cap_thread_attr_t stored = CAP_THREAD_ATTR_INITIALIZER;
static atomic_bool changed;

int cap_thread_attr_setdefault(const cap_thread_attr_t *attr)
{
    if (attr == NULL || !cap__thread_attr_valid(attr))
        return EINVAL;
    cap__ownspin_lock(&lock);
    size_t keep = stored.stack_size;
    stored = *attr;
    if (stored.stack_size == 0)
        stored.stack_size = keep; /* 0 leaves the stack size as it was (glibc) */
    cap__ownspin_unlock(&lock);
    atomic_store_explicit(&changed, true, memory_order_release);
    return 0;
}

int cap_thread_attr_getdefault(cap_thread_attr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    cap__ownspin_lock(&lock);
    *attr = stored;
    cap__ownspin_unlock(&lock);
    return 0;
}

bool cap__thread_default_attr(cap_thread_attr_t *attr)
{
    if (!atomic_load_explicit(&changed, memory_order_acquire))
        return false;
    cap_thread_attr_getdefault(attr);
    return true;
}

bool cap__thread_default_attr_fork_hold(void)
{
    return cap__ownspin_lock_unless_mine(&lock);
}

void cap__thread_default_attr_fork_release(bool held)
{
    if (held)
        cap__ownspin_unlock(&lock);
}

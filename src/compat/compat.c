/* SPDX-License-Identifier: MIT */
/*
 * The few out-of-line pieces of the pthread compatibility header
 * (include/capriccio/pthread.h); everything else there is a rename or a
 * static inline shim.
 *
 * cap_errno_location is deliberately *not* declared const (glibc's
 * __errno_location is): a compiler may then not keep the address across a
 * call, which matters because a user thread can block in that call and
 * resume on another worker, whose errno lives elsewhere (DESIGN.md,
 * Migration and TLS). The worker loop keeps each user thread's errno in
 * its TCB and stores it into the current kernel thread's slot on resume,
 * so the slot of the kernel thread running us now is always ours.
 */
#include <errno.h>
#include <stdatomic.h>

#include "capriccio.h"

int *cap_errno_location(void);
int cap_compat_setconcurrency(int level);
int cap_compat_getconcurrency(void);

int *cap_errno_location(void)
{
    return &errno;
}

/* pthread_setconcurrency is only a hint; POSIX asks that get returns what
 * set stored. */
static atomic_int concurrency;

int cap_compat_setconcurrency(int level)
{
    if (level < 0)
        return EINVAL;
    atomic_store_explicit(&concurrency, level, memory_order_relaxed);
    return 0;
}

int cap_compat_getconcurrency(void)
{
    return atomic_load_explicit(&concurrency, memory_order_relaxed);
}

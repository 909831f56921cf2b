/* SPDX-License-Identifier: MIT */
/*
 * The runtime's own descriptors (ownfd.h): a fixed array filled in order;
 * the runtime never closes a descriptor it records. Writers (rare:
 * start-up, a worker's first disk ring) serialise on a spinlock; readers
 * scan without it (a handful of entries with a few workers, so a close()
 * pays a few loads). MAX_OWN covers the epoll or uring instance, its kick
 * eventfd, the signal eventfd, and a ring plus an eventfd per worker for
 * 1,000 workers.
 */
#include "io/ownfd.h"

#include <errno.h>
#include <stdatomic.h>

#include "util/spin.h"

enum { MAX_OWN = 2048 + 8 };

static _Atomic int slots[MAX_OWN];
static atomic_int used; /* slots[0, used) hold descriptors */
static cap__spin lock = CAP__SPIN_INIT;

int cap__ownfd_add(int fd)
{
    if (fd < 0)
        return -EBADF;
    cap__spin_lock(&lock);
    int n = atomic_load_explicit(&used, memory_order_relaxed);
    int rc = -ENOSPC;
    if (n < MAX_OWN) {
        atomic_store_explicit(&slots[n], fd, memory_order_release);
        atomic_store_explicit(&used, n + 1, memory_order_release);
        rc = 0;
    }
    cap__spin_unlock(&lock);
    return rc;
}

bool cap__ownfd_is(int fd)
{
    int n = atomic_load_explicit(&used, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&slots[i], memory_order_acquire) == fd)
            return true;
    return false;
}

int cap__ownfd_next(unsigned first, unsigned last)
{
    int best = -1;
    int n = atomic_load_explicit(&used, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        int fd = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last && (best < 0 || fd < best))
            best = fd;
    }
    return best;
}

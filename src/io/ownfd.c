/* SPDX-License-Identifier: MIT */
/*
 * The runtime's own descriptors (ownfd.h): a fixed array filled in order;
 * the kinds the runtime closes again (a terminal's private description,
 * io/ttyfile.h; the parent's instances in a fork's child) are removed
 * first, leaving -1 in their slots for the next.
 * Writers (rare: start-up, a worker's first disk or accept ring, a
 * terminal's first write) serialise on a spinlock; readers scan without
 * it (a handful of entries with a few workers, so a close() pays a few
 * loads). MAX_OWN covers the epoll or uring instance, its kick
 * eventfd, the signal eventfd, and per worker a disk ring with its two
 * eventfds and an accept ring (io/nowait_ring.h), for 1,000 workers.
 *
 * Where they live: from HIGH_GAP below the soft RLIMIT_NOFILE, capped at
 * 1024 (FD_SETSIZE, and the default soft limit), up: out of the way of the
 * small numbers programs expect from open() or pick for dup2(), and inside
 * what select() can name. Not at the top of a huge limit: the kernel sizes
 * a process's descriptor table to its highest open number.
 */
#include "io/ownfd.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/fd.h"
#include "util/spin.h"

enum { MAX_OWN = 4096 + 8, HIGH_CAP = 1024, HIGH_GAP = 64 };

static _Atomic int slots[MAX_OWN];
static atomic_int used; /* slots[0, used) hold descriptors */
static cap__spin lock = CAP__SPIN_INIT;

void cap__ownfd_add(int fd)
{
    if (fd < 0)
        return;
    cap__spin_lock(&lock);
    int n = atomic_load_explicit(&used, memory_order_relaxed);
    int i = 0;
    while (i < n && atomic_load_explicit(&slots[i], memory_order_relaxed) >= 0)
        i++; /* a slot a removal emptied, else the next */
    if (i < MAX_OWN) { /* past it, fd stays unprotected, as before this existed */
        atomic_store_explicit(&slots[i], fd, memory_order_release);
        if (i == n)
            atomic_store_explicit(&used, n + 1, memory_order_release);
    }
    cap__spin_unlock(&lock);
}

void cap__ownfd_remove(int fd)
{
    cap__spin_lock(&lock);
    int n = atomic_load_explicit(&used, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&slots[i], memory_order_relaxed) == fd)
            atomic_store_explicit(&slots[i], -1, memory_order_release);
    cap__spin_unlock(&lock);
}

void cap__ownfd_forked(void)
{
    lock = (cap__spin)CAP__SPIN_INIT;
}

void cap__ownfd_close(int fd)
{
    if (fd < 0)
        return;
    cap__ownfd_remove(fd);
    cap__fd_closing(fd);
    syscall(SYS_close, fd);
    cap__fd_closed(fd);
}

void cap__ownfd_close_ring(struct io_uring *ring)
{
    cap__ownfd_remove(ring->ring_fd);
    io_uring_queue_exit(ring); /* liburing's raw munmap and close */
}

/* The lowest number our descriptors move to; 0: leave them where they are
 * (a limit too small to spare HIGH_GAP numbers). */
static int high_base(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    rlim_t top = rl.rlim_cur < HIGH_CAP ? rl.rlim_cur : HIGH_CAP;
    return top >= 2 * HIGH_GAP ? (int)(top - HIGH_GAP) : 0;
}

int cap__ownfd_move_high(int fd)
{
    int base = high_base();
    if (fd < 0 || fd >= base)
        return fd;
    /* Raw system calls: fcntl and close are ours to intercept. */
    int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
    if (high < 0)
        return fd;
    syscall(SYS_close, fd);
    return high;
}

int cap__ownfd_adopt(int fd)
{
    fd = cap__ownfd_move_high(fd);
    cap__ownfd_add(fd);
    return fd;
}

void cap__ownfd_move_ring_high(struct io_uring *ring)
{
    int fd = cap__ownfd_move_high(ring->ring_fd);
    if (fd != ring->ring_fd) {
        /* liburing enters through enter_ring_fd, the same descriptor
         * until io_uring_register_ring_fd, which we do not use. */
        ring->ring_fd = fd;
        ring->enter_ring_fd = fd;
    }
}

bool cap__ownfd_is(int fd)
{
    if (fd < 0)
        return false;
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

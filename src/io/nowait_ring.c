/* SPDX-License-Identifier: MIT */
/*
 * The rings of nowait_ring.h: one small io_uring per worker, made by the
 * worker's kernel thread the first time a thread there needs it (a
 * program that never accepts on a listener it did not get from us never
 * has one), kept for the process's life, one descriptor each (moved high
 * and protected: io/ownfd.h).
 *
 * Why a ring of its own and not the worker's disk ring: a call here is
 * synchronous, one SQE submitted and its CQE taken inside the same
 * call, with no park in between. The disk ring's CQEs are reaped by
 * whichever worker its eventfd wakes, its SQEs batched across a
 * scheduling round, and it exists only under CAP_DISKIO=uring.
 *
 * Invariants: only the worker's kernel thread touches its ring, and at
 * most one call is inside it (a signal handler's calls on this kernel
 * thread do not come here, util/sigctx.h; a call that found one inside
 * would say CAP__NOWAIT_UNAVAILABLE), so its SQ and CQ are empty between
 * calls. A submission the kernel refused, or an operation that did not
 * complete inside io_uring_enter, would break that: the first drops the
 * ring, the second is cancelled and waited for, and either way the call
 * says CAP__NOWAIT_UNAVAILABLE.
 *
 * Whether this kernel can: the first ring that cannot be made for want
 * of io_uring (EPERM, ENOSYS: the io_uring_disabled sysctl, seccomp), or
 * a listening socket's accept refused with EINVAL (a kernel older than
 * 6.10, which does not know IORING_ACCEPT_DONTWAIT), turns the rings off
 * for the process; each later call says CAP__NOWAIT_UNAVAILABLE at once.
 *
 * A fork's child: the rings' memory is not inherited (MADV_DONTFORK), so
 * the child never writes into the parent's queues; cap__nowait_forked
 * closes the inherited descriptors and the child makes rings of its own.
 * A ring is made, and a call that went wrong is settled, with every
 * signal blocked: no handler runs there. Elsewhere in a call a handler
 * may run and fork, and the child then returns into the call
 * (in_slot says which ring it was using or about to use): that ring's
 * addresses are covered with blank private memory first, so the call
 * finds no CQE there (a system call it makes goes to a closed or
 * another descriptor, harmlessly), frees the ring and says EAGAIN. A
 * connection the parent's ring accepted before the fork is then the
 * parent's to serve; the child holds an unnamed copy until it exits.
 */
#include "io/nowait_ring.h"

#include <errno.h>
#include <liburing.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/ownfd.h"
#include "runtime/config.h"
#include "sched/worker.h"

#ifndef IORING_ACCEPT_DONTWAIT
#define IORING_ACCEPT_DONTWAIT (1U << 1) /* Linux 6.10; newer than Debian 12's liburing */
#endif

enum {
    RING_ENTRIES = 2, /* one call at a time; room for its cancel */
    ACCEPT_TAG = 1,   /* user_data of the call's SQE */
    CANCEL_TAG = 2,
};

struct nwring {
    struct io_uring ring;
    size_t sqes_bytes; /* the SQE array's mapping, for the child's cover */
    bool forked;       /* a fork's child's copy, left to the call inside it */
};

static struct nwring *rings[CAP__MAX_WORKERS]; /* [worker's kernel thread] */
static atomic_bool unavailable;

/* The slot of the ring a call on this kernel thread is using, set before
 * the slot is read; NULL outside calls. */
static __thread struct nwring **in_slot __attribute__((tls_model("initial-exec")));

/* Blocks every signal on this kernel thread (old: what to restore). */
static void block_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, old, _NSIG / 8);
}

static void restore_signals(const sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

/* A new ring (signals blocked by the caller), or NULL. */
static struct nwring *make(void)
{
    struct nwring *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    int rc = io_uring_queue_init(RING_ENTRIES, &r->ring, 0);
    if (rc != 0) {
        free(r);
        if (rc == -EPERM || rc == -ENOSYS)
            atomic_store(&unavailable, true);
        return NULL; /* memory or descriptors: another call tries again */
    }
    if (io_uring_ring_dontfork(&r->ring) != 0) {
        io_uring_queue_exit(&r->ring);
        free(r);
        return NULL;
    }
    cap__ownfd_move_ring_high(&r->ring);
    cap__ownfd_add(r->ring.ring_fd);
    r->sqes_bytes = r->ring.sq.ring_entries * sizeof(struct io_uring_sqe);
    return r;
}

/* The calling worker's ring slot, NULL where there is none. */
static struct nwring **slot_here(void)
{
    if (atomic_load_explicit(&unavailable, memory_order_relaxed))
        return NULL;
    cap__worker *w = cap__worker_self();
    return w != NULL && w->id < CAP__MAX_WORKERS ? &rings[w->id] : NULL;
}

static void drop(struct nwring **slot, struct nwring *r)
{
    *slot = NULL;
    cap__ownfd_remove(r->ring.ring_fd);
    io_uring_queue_exit(&r->ring);
    free(r);
}

/* The call's SQE went in (submitted is io_uring_enter's count) but no
 * CQE came back inside it. Not what Linux 6.10 and later do; made safe
 * all the same: a refused submission leaves the SQE queued, so the ring
 * goes; an operation the kernel keeps (a poll armed for it) is cancelled
 * and waited for, and its result taken, and the rings are turned off.
 * Returns the accept's result, or CAP__NOWAIT_UNAVAILABLE. Signals
 * blocked by the caller. */
static long settle(struct nwring **slot, struct nwring *r, int submitted)
{
    if (submitted != 1) {
        drop(slot, r);
        return CAP__NOWAIT_UNAVAILABLE;
    }
    atomic_store(&unavailable, true);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    io_uring_prep_cancel64(sqe, ACCEPT_TAG, 0);
    io_uring_sqe_set_data64(sqe, CANCEL_TAG);
    io_uring_submit(&r->ring);
    long res = CAP__NOWAIT_UNAVAILABLE;
    for (int seen = 0; seen < 2;) {
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(&r->ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc != 0)
            break;
        if (io_uring_cqe_get_data64(cqe) == ACCEPT_TAG)
            res = cqe->res == -ECANCELED ? -EAGAIN : cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        seen++;
    }
    return res;
}

/* Whether fd is a listening socket: an accept it refused with EINVAL was
 * refused for the flag, not for the socket. */
static bool listening(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    return syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

long cap__nowait_accept(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
        return -EINVAL; /* accept4's first check, made before any wait */
    struct nwring **slot = in_slot == NULL ? slot_here() : NULL;
    if (slot == NULL)
        return CAP__NOWAIT_UNAVAILABLE;
    in_slot = slot;
    atomic_signal_fence(memory_order_seq_cst);
    struct nwring *r = *slot;
    if (r == NULL) {
        sigset_t old;
        block_signals(&old);
        r = *slot = make();
        restore_signals(&old);
        if (r == NULL) {
            in_slot = NULL;
            return CAP__NOWAIT_UNAVAILABLE;
        }
    }
    long res = CAP__NOWAIT_UNAVAILABLE;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring); /* the SQ is empty */
    io_uring_prep_accept(sqe, fd, addr, alen, flags);
    sqe->ioprio = IORING_ACCEPT_DONTWAIT;
    io_uring_sqe_set_data64(sqe, ACCEPT_TAG);
    int submitted = io_uring_submit(&r->ring);
    struct io_uring_cqe *cqe;
    bool forked;
    if (submitted == 1 && io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        res = cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        forked = r->forked;
    } else if (!(forked = r->forked)) {
        sigset_t old;
        block_signals(&old);
        res = settle(slot, r, submitted); /* r may be gone */
        restore_signals(&old);
    }
    atomic_signal_fence(memory_order_seq_cst);
    in_slot = NULL; /* r is not looked at again: a fork from here on frees it in the child */
    if (forked) { /* a fork's child's (see the top) */
        munmap(r->ring.sq.ring_ptr, r->ring.sq.ring_sz);
        if (r->ring.cq.ring_ptr != r->ring.sq.ring_ptr)
            munmap(r->ring.cq.ring_ptr, r->ring.cq.ring_sz);
        munmap(r->ring.sq.sqes, r->sqes_bytes);
        free(r);
        return -EAGAIN;
    }
    if (res == -EINVAL && listening(fd)) { /* the flag is unknown here */
        atomic_store(&unavailable, true);
        return CAP__NOWAIT_UNAVAILABLE;
    }
    return res;
}

/* Blank private memory where the ring's mappings were (not inherited). */
static void cover(void *addr, size_t len)
{
    mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
         -1, 0);
}

void cap__nowait_forked(void)
{
    /* The ring of the call a handler's fork interrupted, if any. */
    struct nwring *inside = in_slot != NULL ? *in_slot : NULL;
    for (int i = 0; i < CAP__MAX_WORKERS; i++) {
        struct nwring *r = rings[i];
        if (r == NULL)
            continue;
        rings[i] = NULL;
        cap__ownfd_close(r->ring.ring_fd);
        if (r != inside) {
            free(r);
            continue;
        }
        cover(r->ring.sq.ring_ptr, r->ring.sq.ring_sz);
        if (r->ring.cq.ring_ptr != r->ring.sq.ring_ptr)
            cover(r->ring.cq.ring_ptr, r->ring.cq.ring_sz);
        cover(r->ring.sq.sqes, r->sqes_bytes);
        r->forked = true;
    }
}

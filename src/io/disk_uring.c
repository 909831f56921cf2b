/* SPDX-License-Identifier: MIT */
/*
 * CAP_DISKIO=uring (default): one io_uring per worker, through liburing.
 *
 * Submission: a user thread fills an SQE on its worker's ring and parks;
 * the SQE is submitted from the park's unlock callback (on the scheduler
 * context) only when the worker has nothing else runnable or BATCH SQEs
 * are waiting, and otherwise when the worker next sleeps or polls
 * (flush). So a burst of requests from the threads of one scheduling
 * round costs one io_uring_enter. Only the owning worker's kernel thread
 * touches a ring's SQ (a thread fills the ring of the worker it runs on),
 * so the SQ needs no lock.
 *
 * Completion: each ring signals an eventfd on every CQE; the eventfd is
 * one of the runtime's own descriptors in the netio backend
 * (cap__io_watch), so whichever worker harvests I/O reaps the ring, under
 * the ring's CQ lock, and unparks the owners of the completions. A worker
 * also reaps its own ring without a system call when it flushes.
 *
 * A request lives on the waiting thread's stack; the reaper sets `done`
 * and unparks under req->lock, and the waiter passes through that lock
 * once after waking before it returns (offload.c's pattern).
 *
 * If a worker's ring cannot be created (memory), its requests go to the
 * offload pool instead (CAP_DISKIO=threads behaviour).
 */
#include <errno.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/diskio.h"
#include "io/io.h"
#include "io/ownfd.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/spin.h"

enum {
    RING_ENTRIES = 256,
    BATCH = 32,        /* submit at once when this many SQEs wait */
    MAX_WORKERS = 1024,
};

struct dring {
    struct io_uring ring;
    int efd;
    cap__spin cq_lock;
    unsigned unsubmitted; /* [owner] SQEs filled since the last submit */
};

struct dreq {
    cap__spin lock;
    struct cap__thread *thread;
    int res;   /* [lock] */
    bool done; /* [lock] */
};

static _Atomic(struct dring *) rings[MAX_WORKERS];
static _Atomic uint8_t ring_failed[MAX_WORKERS];

static void reap(struct dring *r)
{
    /* Wait for a concurrent reaper rather than skip: it may have made its
     * last peek before the CQE whose signal brought us here. */
    cap__spin_lock(&r->cq_lock);
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        struct dreq *q = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        cap__spin_lock(&q->lock);
        q->res = res;
        q->done = true;
        cap__unpark(q->thread);
        cap__spin_unlock(&q->lock);
    }
    cap__spin_unlock(&r->cq_lock);
}

static void ring_signalled(void *arg)
{
    struct dring *r = arg;
    uint64_t v;
    syscall(SYS_read, r->efd, &v, sizeof v); /* level-triggered backends need it drained */
    reap(r);
}

/* w's ring, created on first use by w's own kernel thread; NULL if it
 * cannot be. */
static struct dring *ring_of(cap__worker *w)
{
    if (w == NULL || w->id >= MAX_WORKERS)
        return NULL;
    struct dring *r = atomic_load_explicit(&rings[w->id], memory_order_acquire);
    if (r != NULL || atomic_load(&ring_failed[w->id]))
        return r;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        goto fail;
    if (io_uring_queue_init(RING_ENTRIES, &r->ring, 0) != 0)
        goto fail_free;
    cap__ownfd_move_ring_high(&r->ring);
    r->efd = cap__ownfd_move_high((int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (r->efd < 0)
        goto fail_ring;
    if (io_uring_register_eventfd(&r->ring, r->efd) != 0 ||
        cap__io_watch(r->efd, ring_signalled, r) != 0) {
        syscall(SYS_close, r->efd);
        goto fail_ring;
    }
    cap__ownfd_add(r->ring.ring_fd);
    cap__ownfd_add(r->efd);
    atomic_store_explicit(&rings[w->id], r, memory_order_release);
    return r;
fail_ring:
    io_uring_queue_exit(&r->ring);
fail_free:
    free(r);
fail:
    atomic_store(&ring_failed[w->id], 1);
    return NULL;
}

static void submit(struct dring *r)
{
    /* Ask the ring, not only our counter: a submit the kernel cut short
     * (EINTR, EAGAIN) leaves SQEs behind that must go with the next one. */
    if (r->unsubmitted == 0 && io_uring_sq_ready(&r->ring) == 0)
        return;
    r->unsubmitted = 0;
    io_uring_submit(&r->ring);
}

static void uring_flush(cap__worker *w)
{
    struct dring *r = w != NULL && w->id < MAX_WORKERS ? atomic_load(&rings[w->id]) : NULL;
    if (r == NULL)
        return;
    submit(r);
    reap(r);
}

struct parked {
    struct dreq *req;
    struct dring *ring;
    cap__worker *w;
};

static bool after_park(void *arg)
{
    struct parked *p = arg;
    cap__spin_unlock(&p->req->lock);
    cap__worker *w = p->w;
    /* Submit now unless more threads of this round are about to run (they
     * may add SQEs to the same batch). */
    if (p->ring->unsubmitted >= BATCH ||
        (w->local.len == 0 && atomic_load(&w->inbox) == NULL))
        submit(p->ring);
    return true;
}

static struct io_uring_sqe *get_sqe(struct dring *r)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (sqe == NULL) { /* the ring is full of unsubmitted SQEs */
        r->unsubmitted = 0;
        io_uring_submit(&r->ring);
        sqe = io_uring_get_sqe(&r->ring);
    }
    return sqe;
}

/* Parks the caller until the SQE just filled with q completes. */
static int wait_req(struct dring *r, struct dreq *q)
{
    struct cap__thread *self = cap__current();
    cap__worker *w = cap__worker_self();
    q->thread = self;
    r->unsubmitted++;
    atomic_fetch_add(&cap__io_inflight, 1);
    struct parked p = { .req = q, .ring = r, .w = w };
    cap__spin_lock(&q->lock);
    for (;;) {
        cap__park(CAP__PARK_IO_DISK, q, CAP__FOREVER, after_park, &p);
        cap__spin_lock(&q->lock);
        if (q->done)
            break;
        p.w = cap__worker_self(); /* a spurious wake-up: park again */
    }
    cap__spin_unlock(&q->lock);
    atomic_fetch_sub(&cap__io_inflight, 1);
    return q->res;
}

static ssize_t uring_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                        off_t off, int rwf)
{
    struct dring *r = cap__current() != NULL ? ring_of(cap__worker_self()) : NULL;
    struct io_uring_sqe *sqe = r != NULL ? get_sqe(r) : NULL;
    if (sqe == NULL)
        return cap__diskio_threads.rw(op, fd, iov, cnt, off, rwf);
    struct dreq q = { 0 };
    if (op == CAP__DISK_READ)
        io_uring_prep_readv(sqe, fd, iov, (unsigned)cnt, (__u64)off);
    else
        io_uring_prep_writev(sqe, fd, iov, (unsigned)cnt, (__u64)off);
    sqe->rw_flags = rwf;
    io_uring_sqe_set_data(sqe, &q);
    return wait_req(r, &q);
}

static int uring_fsync(int fd, bool datasync)
{
    struct dring *r = cap__current() != NULL ? ring_of(cap__worker_self()) : NULL;
    struct io_uring_sqe *sqe = r != NULL ? get_sqe(r) : NULL;
    if (sqe == NULL)
        return cap__diskio_threads.fsync(fd, datasync);
    struct dreq q = { 0 };
    io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
    io_uring_sqe_set_data(sqe, &q);
    return wait_req(r, &q);
}

static int uring_start(void)
{
    struct io_uring probe;
    int rc = io_uring_queue_init(2, &probe, 0);
    if (rc != 0)
        return rc < 0 ? rc : -ENOSYS;
    io_uring_queue_exit(&probe);
    return 0;
}

const cap__diskio cap__diskio_uring = {
    .name = "uring",
    .start = uring_start,
    .rw = uring_rw,
    .fsync = uring_fsync,
    .flush = uring_flush,
};

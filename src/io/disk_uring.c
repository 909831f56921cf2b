/* SPDX-License-Identifier: MIT */
/*
 * CAP_DISKIO=uring (default): one io_uring per worker, through liburing.
 *
 * Submission: a user thread fills an SQE on its worker's ring and parks;
 * the SQE is submitted from the park's unlock callback (on the scheduler
 * context) only when the worker has nothing else runnable or BATCH SQEs
 * are waiting, and otherwise when the worker next sleeps or polls
 * (flush). So a burst of requests from the threads of one scheduling
 * round costs one io_uring_enter per BATCH requests (kept small: see
 * after_park). Only the owning worker's kernel thread touches a ring's SQ
 * (a thread fills the ring of the worker it runs on), so the SQ needs no
 * lock.
 *
 * Completion: each ring signals an eventfd on every CQE; the eventfd is
 * one of the runtime's own descriptors in the netio backend
 * (cap__io_watch), so whichever worker harvests I/O reaps the ring, under
 * the ring's CQ lock, and unparks the owners of the completions. A worker
 * also reaps its own ring without a system call when it flushes, and
 * while it spins with nothing to run (uring_spin). For that spin the
 * eventfd is switched off (IORING_CQ_EVENTFD_DISABLED, a flag in the
 * shared CQ ring: no system call), as for a wait in the ring below: the
 * owner is looking at its CQ itself, and each signal would cost a read
 * that drains it and the wake-up of whichever worker harvests, for
 * nothing (one reader on two workers: 1.7 eventfd reads and 0.08 futex
 * calls per O_DIRECT read with the eventfd on, 0.02 and 0.003 off).
 * When the spin ends (uring_spin_end: work found, or the worker goes to
 * sleep) the eventfd goes back on first and the CQ is reaped after, so
 * a completion posted while it was off is taken there and one posted
 * later signals: none is left in the CQ unannounced.
 *
 * Waiting in the ring (uring_wait): a worker with nothing to run and
 * requests of its own in flight sleeps in io_uring_enter on its ring
 * instead of on its futex or in epoll, so a completion wakes it directly
 * (IRQ, CQE, the worker runs the thread) rather than through the eventfd,
 * the epoll holder and a cross-worker wake-up. The eventfd is switched
 * off for the wait (IORING_CQ_EVENTFD_DISABLED: no other worker is
 * woken to reap what the owner is about to reap itself). What else must
 * end the wait is in the ring as one-shot POLL_ADDs: the ring's wake
 * eventfd (written by uring_wake, how others wake a worker sleeping
 * here; io/idle.c) and, when the worker holds the shared netio instance,
 * the instance's own descriptor (network readiness, and its kick). The
 * next timer bounds the wait (a timeout passed to io_uring_enter).
 *
 * A request lives on the waiting thread's stack; the reaper sets `done`
 * and unparks under req->lock, and the waiter passes through that lock
 * once after waking before it returns (offload.c's pattern).
 *
 * If a worker's ring cannot be created (memory), its requests go to the
 * offload pool instead (CAP_DISKIO=threads behaviour).
 *
 * A fork's child unmaps and closes the parent's rings (uring_forget)
 * without a call on them, and its workers make their own, as above.
 *
 * The file position: requests at offset -1 (read, write, readv, writev)
 * go to the pool, whose plain call takes the position under the file's
 * lock as read(2) and write(2) do. In the ring, io_uring reads and
 * advances the position without that lock, so threads (or processes)
 * sharing a descriptor overwrote each other's records and read the same
 * ones twice (tests/io/file_position_shared_by_writers); and it stores
 * the position back only for transfers done by the time the request
 * returns to the ring: an O_DIRECT one completes later, from the device,
 * and the position stayed where it was (Linux 6.18: a loop of read()
 * read the first block for ever). The price: the pool's round trip
 * costs 2.6x the ring's (one thread, 4 KiB writes: ~52 against ~20 us; a
 * plain write(2) is ~2.6 us). Buffered writes to a local file system
 * that refuses RWF_NOWAIT (ext4) are made on the worker now (disk.c,
 * "Buffered writes"); those that still come here (a file that proved
 * slow, another file system, CAP_FILE_WRITES=backend) pay it. A write to
 * an O_APPEND file stays in the ring: the kernel appends it at the end
 * of the file under the inode's lock, and no record is lost whatever the
 * position says.
 *
 * So do writes under a file size limit (fsize_limited), and RWF_HIPRI:
 * a ring made without IORING_SETUP_IOPOLL refuses it (EINVAL), where
 * preadv2/pwritev2 take it as a hint (a buffered file ignores it).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
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
    BATCH = 4,         /* submit at once when this many SQEs wait (below) */
    MAX_WORKERS = 1024,
};

struct dring {
    struct io_uring ring;
    int efd;      /* signalled on every CQE, unless the owner waits in the ring */
    int wake_efd; /* uring_wake writes it; a POLL_ADD in the ring watches it */
    cap__spin cq_lock;
    unsigned unsubmitted; /* [owner] SQEs filled since the last submit */
    atomic_int inflight;  /* requests filled and not yet reaped */
    atomic_bool wake_armed, inst_armed; /* the POLL_ADDs are in the ring */
    atomic_bool inst_fired;             /* the instance's poll completed */
    atomic_bool owner_waiting;          /* between wait_prepare and wait's end */
    bool spin_quiet;                    /* [owner] eventfd off for an idle spin */
};

/* user_data of the ring's own POLL_ADDs (requests carry a struct dreq *). */
static char tag_wake, tag_inst;

struct dreq {
    cap__spin lock;
    struct cap__thread *thread;
    int res;   /* [lock] */
    bool done; /* [lock] */
};

static _Atomic(struct dring *) rings[MAX_WORKERS];
static _Atomic uint8_t ring_failed[MAX_WORKERS];

/* foreign: called by a worker other than the ring's owner. */
static void reap(struct dring *r, bool foreign)
{
    /* Wait for a concurrent reaper rather than skip: it may have made its
     * last peek before the CQE whose signal brought us here. */
    cap__spin_lock(&r->cq_lock);
    /* While the owner waits in the ring, what completes is its to take: a
     * CQE taken here just before its wait began would not end the wait,
     * and the wake-up it carried (tag_wake) would be lost. */
    if (foreign && atomic_load(&r->owner_waiting)) {
        cap__spin_unlock(&r->cq_lock);
        return;
    }
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        void *data = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        if (data == &tag_wake) { /* the owner drains wake_efd when it re-arms */
            atomic_store(&r->wake_armed, false);
            continue;
        }
        if (data == &tag_inst) {
            atomic_store(&r->inst_armed, false);
            atomic_store(&r->inst_fired, true);
            continue;
        }
        struct dreq *q = data;
        atomic_fetch_sub_explicit(&r->inflight, 1, memory_order_relaxed);
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
    cap__worker *w = cap__worker_self();
    reap(r, w == NULL || w->id >= MAX_WORKERS || atomic_load(&rings[w->id]) != r);
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
    r->wake_efd = cap__ownfd_move_high((int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (r->wake_efd < 0) {
        syscall(SYS_close, r->efd);
        goto fail_ring;
    }
    if (io_uring_register_eventfd(&r->ring, r->efd) != 0 ||
        cap__io_watch(r->efd, ring_signalled, r) != 0) {
        syscall(SYS_close, r->efd);
        syscall(SYS_close, r->wake_efd);
        goto fail_ring;
    }
    cap__ownfd_add(r->ring.ring_fd);
    cap__ownfd_add(r->efd);
    cap__ownfd_add(r->wake_efd);
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

/* In a fork's child (diskio.h): the parent's rings are unmapped and
 * closed here, untouched; each worker of the child makes its own on first
 * use. Read first, written only where set: every page the child writes
 * is copied. */
static void uring_forget(void)
{
    for (int i = 0; i < MAX_WORKERS; i++) {
        if (atomic_load_explicit(&ring_failed[i], memory_order_relaxed))
            atomic_store(&ring_failed[i], 0);
        struct dring *r = atomic_load_explicit(&rings[i], memory_order_relaxed);
        if (r == NULL)
            continue;
        atomic_store(&rings[i], NULL);
        cap__ownfd_close_ring(&r->ring);
        cap__ownfd_close(r->efd);
        cap__ownfd_close(r->wake_efd);
        free(r);
    }
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

/* w's ring if it exists (never creates it). */
static struct dring *ring_if_any(cap__worker *w)
{
    return w != NULL && w->id < MAX_WORKERS
               ? atomic_load_explicit(&rings[w->id], memory_order_acquire)
               : NULL;
}

static void uring_flush(cap__worker *w)
{
    struct dring *r = ring_if_any(w);
    if (r == NULL)
        return;
    submit(r);
    reap(r, false);
}

/* Each round of an idle spin: completions already in w's CQ (posted while
 * it spun) are reaped without a system call. */
static bool uring_spin(cap__worker *w)
{
    struct dring *r = ring_if_any(w);
    if (r == NULL || atomic_load_explicit(&r->inflight, memory_order_relaxed) == 0)
        return false;
    if (!r->spin_quiet) { /* we watch the CQ ourselves until uring_spin_end */
        io_uring_cq_eventfd_toggle(&r->ring, false);
        r->spin_quiet = true;
    }
    if (io_uring_cq_ready(&r->ring) == 0)
        return false;
    reap(r, false);
    return true;
}

/* The end of an idle spin that switched the eventfd off: on again, then
 * reap what completed meanwhile. The fence orders the flag's store before
 * the CQ tail's load, as the kernel posts a CQE before it reads the flag:
 * either it signals, or we see the CQE. */
static bool uring_spin_end(cap__worker *w)
{
    struct dring *r = ring_if_any(w);
    if (r == NULL || !r->spin_quiet)
        return false;
    io_uring_cq_eventfd_toggle(&r->ring, true);
    r->spin_quiet = false;
    atomic_thread_fence(memory_order_seq_cst);
    if (io_uring_cq_ready(&r->ring) == 0)
        return false;
    reap(r, false);
    return true;
}

/* Whether a spin of w waits for completions of its own (uring_spin). */
static bool uring_spin_awaits(cap__worker *w)
{
    struct dring *r = ring_if_any(w);
    return r != NULL && atomic_load_explicit(&r->inflight, memory_order_relaxed) != 0;
}

/* One-shot POLL_ADD of fd for POLLIN with tag; false if the SQ is full. */
static bool arm_poll(struct dring *r, int fd, void *tag)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (sqe == NULL)
        return false;
    io_uring_prep_poll_add(sqe, fd, POLLIN);
    io_uring_sqe_set_data(sqe, tag);
    return true;
}

/* Before w publishes that it waits in its ring (io/idle.c): false when it
 * has nothing of its own in flight or a poll it needs (the wake-up's, and
 * the instance's when it holds it) cannot be armed (it then sleeps as
 * before). inst_fd: the netio instance's descriptor when w holds it, else
 * -1. A wake-up written from here on ends the wait. */
static bool uring_wait_prepare(cap__worker *w, int inst_fd)
{
    struct dring *r = ring_if_any(w);
    if (r == NULL || atomic_load_explicit(&r->inflight, memory_order_relaxed) == 0)
        return false;
    /* From here on only we reap (see reap); passing through the lock waits
     * out a reaper that started before. */
    atomic_store(&r->owner_waiting, true);
    cap__spin_lock(&r->cq_lock);
    cap__spin_unlock(&r->cq_lock);
    if (!atomic_load(&r->wake_armed)) {
        uint64_t v;
        syscall(SYS_read, r->wake_efd, &v, sizeof v); /* what woke an earlier wait */
        if (!arm_poll(r, r->wake_efd, &tag_wake)) {
            atomic_store(&r->owner_waiting, false);
            reap(r, false); /* what others left to us meanwhile */
            return false;
        }
        atomic_store(&r->wake_armed, true);
    }
    if (inst_fd >= 0 && !atomic_load(&r->inst_armed)) {
        if (!arm_poll(r, inst_fd, &tag_inst)) {
            /* The holder's kick reaches it only through the instance: a
             * wait here without that poll would miss it (a full
             * submission queue, which the flush before should rule out). */
            atomic_store(&r->owner_waiting, false);
            reap(r, false);
            return false;
        }
        atomic_store(&r->inst_armed, true);
    }
    return true;
}

/* After a successful prepare: the wait itself if block, then back to
 * normal (others may reap again) and reap. Returns whether the instance's
 * poll completed since the last look (its holder harvests). */
static bool uring_wait(cap__worker *w, uint64_t deadline, bool block)
{
    struct dring *r = ring_if_any(w);
    if (!block) {
        atomic_store(&r->owner_waiting, false);
        reap(r, false);
        return atomic_exchange(&r->inst_fired, false);
    }
    struct __kernel_timespec ts, *tsp = NULL;
    if (deadline != CAP__FOREVER) {
        uint64_t now = cap__now(), left = deadline > now ? deadline - now : 0;
        ts.tv_sec = (long long)(left / 1000000000u);
        ts.tv_nsec = (long long)(left % 1000000000u);
        tsp = &ts;
    }
    io_uring_cq_eventfd_toggle(&r->ring, false);
    struct io_uring_cqe *cqe;
    r->unsubmitted = 0;
    io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, tsp, NULL);
    io_uring_cq_eventfd_toggle(&r->ring, true);
    atomic_store(&r->owner_waiting, false);
    reap(r, false); /* after switching both back: nothing completes unannounced */
    return atomic_exchange(&r->inst_fired, false);
}

static void uring_wake(cap__worker *w)
{
    struct dring *r = ring_if_any(w);
    if (r != NULL) {
        uint64_t one = 1;
        syscall(SYS_write, r->wake_efd, &one, sizeof one);
    }
}

struct parked {
    struct dreq *req;
    struct dring *ring;
    cap__worker *w;
};

/* Batches stay small. The kernel submits a batch's requests one by one
 * under a block plug and hands them to the device only at the end, so the
 * first request of a batch of n waits for the other n-1 to be prepared
 * (~2-3 us each here, a virtio disk under nested virtualization), and the
 * device gets them as one burst while the worker runs the rest of its
 * round. With 64 O_DIRECT readers on two workers and BATCH 32, rounds
 * submitted ~10 at a time (block tracepoints), each request spent
 * 18-31 us between insert and issue (NPTL's 1.3), the device's own
 * latency was 10-25% above NPTL's at the same depth and the rate 0.90-0.93x
 * NPTL; submitting each request at once (BATCH 1) gave 0.95-1.05x, at an
 * io_uring_enter per read. Four keeps most of that gain (16 readers:
 * device latency 197 us against 241 with 32, 206 for NPTL) at a quarter
 * of the system calls. */
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
    atomic_fetch_add_explicit(&r->inflight, 1, memory_order_relaxed);
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

/* Whether a write goes to the end of the file whatever the position: an
 * O_APPEND file (asked of the kernel: F_GETFL, cheap beside the ring's
 * round trip) or RWF_APPEND. Not O_DIRECT, whose position the ring would
 * leave behind (see the top). */
static bool appends(enum cap__disk_op op, int fd, int rwf)
{
    if (op != CAP__DISK_WRITE)
        return false;
    if (rwf & RWF_APPEND)
        return true;
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    return fl >= 0 && (fl & O_APPEND) && !(fl & O_DIRECT); /* O_DIRECT: see above */
}

/* Whether writes are limited in size (RLIMIT_FSIZE). A write that starts
 * at the limit raises SIGXFSZ in the thread that makes it: in the ring,
 * the worker's kernel thread when the kernel issues it at submission, but
 * an io-wq thread, where it is lost, when it punts it (a buffered write to
 * ext4). Such writes go to the pool, which hands the signal back to the
 * caller (disk_threads.c). */
static bool fsize_limited(enum cap__disk_op op)
{
    struct rlimit rl;
    return op == CAP__DISK_WRITE &&
           syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl) == 0 &&
           rl.rlim_cur != RLIM_INFINITY;
}

static ssize_t uring_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                        off_t off, int rwf)
{
    if ((off == -1 && !appends(op, fd, rwf)) || (rwf & RWF_HIPRI) ||
        fsize_limited(op)) /* see the top, and fsize_limited */
        return cap__diskio_threads.rw(op, fd, iov, cnt, off, rwf);
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

/* Whether io_uring is there: an io_uring_setup the kernel refuses for its
 * arguments (no entries: EINVAL) once it has checked that the calling
 * process may use io_uring at all (built in: ENOSYS otherwise; the
 * io_uring_disabled sysctl and seccomp filters: EPERM or ENOSYS). No ring
 * is made. Until session 52 the probe made a ring and tore it down, on a
 * kernel thread of its own (the teardown's deferred work, queued to the
 * ring's task as a signal-like notification, made the probing thread's
 * next blocking call fail with a spurious EINTR): a thread's creation and
 * a ring's setup and teardown at every start-up, for an answer the
 * arguments give. A worker whose own ring then cannot be made (memory,
 * an old kernel's locked-memory limit) serves its reads on the thread
 * pool (ring_of). */
static int uring_start(void)
{
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    long rc = syscall(SYS_io_uring_setup, 0, &params);
    if (rc >= 0) { /* not this kernel's answer to no entries: a ring after all */
        syscall(SYS_close, rc);
        return 0;
    }
    return errno == EINVAL ? 0 : -errno;
}

const cap__diskio cap__diskio_uring = {
    .name = "uring",
    .start = uring_start,
    .forget = uring_forget,
    .rw = uring_rw,
    .fsync = uring_fsync,
    .flush = uring_flush,
    .spin = uring_spin,
    .spin_end = uring_spin_end,
    .spin_awaits = uring_spin_awaits,
    .wait_prepare = uring_wait_prepare,
    .wait = uring_wait,
    .wake = uring_wake,
};

/* SPDX-License-Identifier: MIT */
/*
 * CAP_NETIO=uring: descriptor readiness through one shared io_uring (via
 * liburing). Each descriptor is armed once per life with a multishot
 * POLL_ADD for both directions, user_data = gen << 32 | epoch << 20 | fd
 * (stale CQEs of an ended life are dropped, fd.h; the epoch tells the
 * polls of one life apart: re-armed after a full CQ, or after an exec
 * that failed, see EPOCH_SHIFT); a kick eventfd is armed the same way
 * under user_data KICK.
 *
 * At an exec (exec_begin) the polls of close-on-exec descriptors are
 * cancelled, so that the exec closes their files at once: Linux cancels
 * only the exec'ing thread's requests itself, and another worker's held
 * its socket open for milliseconds into the new program. If the exec
 * fails they are armed again (exec_failed). Lazily armed pipes (below)
 * alike: their one-shot poll is cancelled and none is armed until then.
 *
 * Locks: the SQ is shared by every worker that arms or disarms, so filling
 * and submitting SQEs happens under sq_lock. The CQ is consumed only by
 * the instance holder (idle.c), which waits with io_uring_wait_cqes
 * (IORING_FEAT_EXT_ARG: the wait never touches the SQ). A multishot poll
 * that ends (no IORING_CQE_F_MORE: cancelled, or the CQ overflowed) is
 * re-armed if its life is still current.
 *
 * Disarm submits a cancel before the descriptor is closed: a pending
 * poll request holds a reference to the file, and a poll that outlived
 * its life would keep a closed socket or pipe open underneath (its peer
 * never sees EOF). io_uring ends a cancelled poll in task work of the
 * kernel thread that submitted it (COOP_TASKRUN: run at that thread's
 * next entry into the kernel, without waking it), and only then lets go
 * of the file. So f->backend_slot keeps the worker that armed the poll
 * (OWNER), and release(), before the close, kicks that worker when it
 * is not the closer's own and waits until its kernel thread took the
 * kick (the task work runs before a signal's handler): the close then
 * releases the file before it returns, as on NPTL. A closer on the
 * arming worker ran the task work on its way out of the cancel's
 * submission. So the cancel must find every poll of the life: no
 * poll is added for a life after its cancel (arm() and the re-arm below
 * run under f->lock, only for the gen current there, and disarm runs in
 * the hold of f->lock that ends the life: netio.h), and the cancel is an
 * ASYNC_CANCEL, which a wake-up in progress does not turn away (see
 * submit_op).
 *
 * At a process exit (at_exit, after the program's destructors) one
 * cancel (IORING_REGISTER_SYNC_CANCEL) ends every request of the ring:
 * the kernel would otherwise end a dead process's polls in a worker of
 * its own, milliseconds after the parent had reaped it, and until then
 * its sockets stayed open (a listener's port could not be bound again, a
 * peer saw no end-of-file).
 * No kick is needed: each kernel thread of the process runs the task
 * work that ends its cancelled polls on its way out of the kernel, at
 * the latest in its own exit, before the process can be reaped. From
 * then on no poll is added (but the kick's, and those at_exit itself
 * makes again for the runtime's own eventfds: the signal dispatch, the
 * disk rings' completions), and the io layer makes every other
 * registered descriptor unpollable (cap__io_at_exit): a thread parked on
 * one since before, which code later in the exit may still wake (a
 * later library's destructor), waits in poll(2) instead. A signal
 * whose default action ends the process runs the same cancel first
 * (io/sigintr.h, cap__sig_last_step_arm); SIGKILL and the signals that
 * dump core have no such last step (README, Limits).
 *
 * Pipes the runtime made (owned, fd.h) are armed lazily instead: a
 * one-shot poll, for the events its waiters ask for, only while a
 * thread waits on the descriptor (interest(), after the waiter's link);
 * one that completes with waiters left is re-armed, and one armed when a
 * waiter of the other direction links is widened to its events too. A write on such a
 * pipe wakes its reader directly (io/pipe.h), so a multishot poll
 * would only add a completion per write, posted through io_uring task
 * work on the kernel thread that armed it: with two workers busy on a
 * pipe ring, 17% of the CPU time (a single worker seldom harvests, and
 * its polls mostly ended on a full completion queue). The one-shot poll
 * still catches readiness the direct wake-up cannot see (writes that
 * bypass the wrappers, a pipe handed to a child): arming reports current
 * readiness, and the waiter linked before it armed, so nothing between
 * its failed attempt and the arm is lost (wait.c's seq check covers the
 * time before the link).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/netio.h"
#include "io/ownfd.h"
#include "io/sigintr.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/spin.h"

#define KICK UINT64_MAX
enum { RING_ENTRIES = 1024, POLL_MASK = POLLIN | POLLOUT | POLLPRI | POLLRDHUP };

/* f->backend_slot of a lazily armed descriptor (see the top); 0: multishot.
 * While a one-shot poll is armed (LAZY_ARMED), its events are kept from
 * bit ARMED_SHIFT up, so a waiter that needs others can widen it.
 * LAZY_PAUSED: cancelled for an exec that may still fail, and not armed
 * again until it does (exec_begin, below). */
enum { LAZY = 1u << 0, LAZY_ARMED = 1u << 1, LAZY_PAUSED = 1u << 3, ARMED_SHIFT = 8 };
/* Also in f->backend_slot: the worker whose kernel thread submitted the
 * poll armed now, + 1, from bit OWNER_SHIFT (OWNER_ANY: another kernel
 * thread, or a worker beyond 254); and CANCELLED from a disarm until
 * release() (see the top). */
enum { CANCELLED = 1u << 2, OWNER_SHIFT = 24, OWNER_ANY = 0xff };
#define OWNER_MASK (0xffu << OWNER_SHIFT)
/* A multishot poll's arm epoch, in f->backend_slot and in the poll's
 * user_data (descriptor numbers stay below 2^20): each arm takes the next
 * one, so a completion of an earlier poll of the same life (one that
 * ended on a full CQ before an exec's cancel, harvested after the re-arm)
 * is told apart and re-arms nothing. PAUSED: cancelled for an exec that
 * may still fail (exec_begin, below); multishot polls only (on a lazy
 * one, that bit holds armed events). */
enum { EPOCH_SHIFT = 3, EPOCH_BITS = 0x1f, PAUSED = 1u << 8, DATA_EPOCH_SHIFT = 20 };
#define DATA_FD_MASK ((1ull << DATA_EPOCH_SHIFT) - 1)

static uint32_t slot_epoch(uint32_t slot)
{
    return (slot >> EPOCH_SHIFT) & EPOCH_BITS;
}

/* The user_data of the multishot poll of fd's life gen armed at epoch. */
static uint64_t poll_data(int fd, uint32_t gen, uint32_t epoch)
{
    return (uint64_t)gen << 32 | (uint64_t)(epoch & EPOCH_BITS) << DATA_EPOCH_SHIFT | (uint32_t)fd;
}

/* This kernel thread as OWNER bits. */
static uint32_t owner_here(void)
{
    cap__worker *w = cap__worker_self();
    uint32_t id = w != NULL && w->id < OWNER_ANY - 1 ? (uint32_t)w->id + 1 : OWNER_ANY;
    return id << OWNER_SHIFT;
}
/* In the user_data of a one-shot poll, beside gen << 32 | fd (descriptor
 * numbers stay below CAP__FD_MAX, so bits 30 and 31 are free); and in
 * that of the request that widens it, with WIDEN_TAG. */
#define LAZY_TAG (1ull << 31)
#define WIDEN_TAG (1ull << 30)

static struct io_uring ring;
static cap__spin sq_lock = CAP__SPIN_INIT;
static int kickfd = -1;
static atomic_int kicked;
static bool exiting; /* [sq_lock] at_exit() cancelled every request */
/* Set by the exiting thread while it re-arms the runtime's own
 * descriptors after that cancel (at_exit): its submissions only. */
static __thread bool exit_rearm;

enum sqe_op { OP_MULTISHOT, OP_ONESHOT, OP_CANCEL, OP_WIDEN };

/* Queues one SQE under sq_lock and submits it: a multishot poll, a
 * one-shot poll for the events in `mask`, the cancel of the poll with
 * user_data `data`, or the change of that (one-shot) poll's events to
 * `mask`. 0 or -errno. */
static int submit_op(enum sqe_op op, uint64_t data, int fd, unsigned mask)
{
    cap__spin_lock(&sq_lock);
    if (exiting && op != OP_CANCEL && data != KICK && !exit_rearm) {
        cap__spin_unlock(&sq_lock);
        return -ECANCELED; /* after at_exit's cancel: it would hold its file */
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (sqe == NULL) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    if (sqe == NULL) {
        cap__spin_unlock(&sq_lock);
        return -EBUSY;
    }
    if (op == OP_CANCEL) {
        /* Not POLL_REMOVE: that gives up with -EALREADY when it meets a
         * wake-up being processed, and a multishot poll then lives on
         * (holding its file: a closed pipe's reader never saw EOF). A
         * cancel marks the poll, whose owner ends it with -ECANCELED. */
        io_uring_prep_cancel64(sqe, data, 0);
        io_uring_sqe_set_data64(sqe, KICK - 1); /* its own completion is ignored */
    } else if (op == OP_WIDEN) {
        /* A POLL_REMOVE that updates the events: the poll is taken off
         * its wait queues and added again, looking at readiness anew. */
        io_uring_prep_poll_update(sqe, data, 0, mask, IORING_POLL_UPDATE_EVENTS);
        io_uring_sqe_set_data64(sqe, data | WIDEN_TAG);
    } else if (op == OP_ONESHOT) {
        io_uring_prep_poll_add(sqe, fd, mask);
        io_uring_sqe_set_data64(sqe, data);
    } else {
        io_uring_prep_poll_multishot(sqe, fd, POLL_MASK);
        io_uring_sqe_set_data64(sqe, data);
    }
    int rc = io_uring_submit(&ring);
    cap__spin_unlock(&sq_lock);
    return rc < 0 ? rc : 0;
}

static int submit_poll(uint64_t data, int fd, bool remove)
{
    return submit_op(remove ? OP_CANCEL : OP_MULTISHOT, data, fd, 0);
}

/* Arms a multishot poll of f at the next epoch, owned by this kernel
 * thread (f->lock held, gen current). */
static int arm_multishot(cap__fd *f, int fd, uint32_t gen)
{
    uint32_t epoch = (slot_epoch(__atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST)) + 1) &
                     EPOCH_BITS;
    __atomic_store_n(&f->backend_slot, owner_here() | epoch << EPOCH_SHIFT, __ATOMIC_SEQ_CST);
    return submit_poll(poll_data(fd, gen, epoch), fd, false);
}

/* The user_data of a lazily armed fd's one-shot poll, in life gen. */
static uint64_t lazy_data(int fd, uint32_t gen)
{
    return (uint64_t)gen << 32 | (uint32_t)fd | LAZY_TAG;
}

/* Whether f is armed lazily (see the top). */
static bool lazy(const cap__fd *f)
{
    return (__atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST) & LAZY) != 0;
}

/* Whether a lazily armed f has waiters, and the events they ask for
 * (wait.h: a one-shot poll for more would end at once, be re-armed and
 * end again while the readiness nobody asked for lasts). Caller holds
 * f->lock. */
static bool lazy_waited(const cap__fd *f)
{
    return f->head[CAP__IO_READ] != NULL || f->obs[CAP__IO_READ] != NULL ||
           f->head[CAP__IO_WRITE] != NULL || f->obs[CAP__IO_WRITE] != NULL;
}

/* Arms a one-shot poll on a lazily armed f that has waiters and none
 * armed; or widens the one armed when a waiter needs events it does not
 * watch: armed for a poll() that waits for a hang-up on a write end, it
 * would sleep on while a writer parked on the full pipe, and a raw read
 * drained it (the writer hung). Caller holds f->lock. */
static void lazy_arm(cap__fd *f, int fd, uint32_t gen)
{
    uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
    if (!lazy_waited(f) || !(slot & LAZY) || (slot & LAZY_PAUSED))
        return; /* no waiters, disarmed, or an exec is under way */
    /* Perhaps none: a poll() for hang-ups alone; the kernel adds those. */
    unsigned m = (unsigned short)cap__io_waited_events(f);
    uint64_t data = lazy_data(fd, gen);
    if (slot & LAZY_ARMED) {
        unsigned armed = slot >> ARMED_SHIFT;
        if ((m & ~armed) == 0)
            return;
        /* Never narrowed: a waiter gone meanwhile costs one completion,
         * whose re-arm asks for what is left. If the poll is ending, the
         * widening fails and its completion re-arms for every waiter. */
        m |= armed;
        /* The poll stays its submitter's: the owner is kept. */
        __atomic_store_n(&f->backend_slot,
                         LAZY | LAZY_ARMED | m << ARMED_SHIFT | (slot & OWNER_MASK),
                         __ATOMIC_SEQ_CST);
        if (submit_op(OP_WIDEN, data, fd, m) != 0)
            __atomic_store_n(&f->backend_slot, slot, __ATOMIC_SEQ_CST);
        return;
    }
    __atomic_store_n(&f->backend_slot, LAZY | LAZY_ARMED | m << ARMED_SHIFT | owner_here(),
                     __ATOMIC_SEQ_CST);
    if (submit_op(OP_ONESHOT, data, fd, m) != 0)
        __atomic_store_n(&f->backend_slot, LAZY, __ATOMIC_SEQ_CST);
}

static int uring_start(void)
{
    /* COOP_TASKRUN (Linux 5.19): a readiness event of a poll armed by
     * another worker is delivered to that worker's kernel thread without
     * an IPI; it runs the completion at its next kernel entry (workers
     * make system calls all the time) or is woken if asleep. Without it,
     * every write to a watched pipe from one worker interrupted the other:
     * pipetest on 2 workers ran at a third of NPTL. */
    struct io_uring_params p = { .flags = IORING_SETUP_COOP_TASKRUN };
    int rc = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
    if (rc == -EINVAL) { /* an older kernel */
        p = (struct io_uring_params){ 0 };
        rc = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
    }
    if (rc != 0)
        return rc < 0 ? rc : -ENOSYS;
    if (!(p.features & IORING_FEAT_EXT_ARG)) {
        io_uring_queue_exit(&ring);
        return -ENOSYS; /* waiting would have to submit a timeout SQE */
    }
    cap__ownfd_move_ring_high(&ring);
    cap__ownfd_add(ring.ring_fd);
    kickfd = cap__ownfd_adopt((int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (kickfd < 0)
        return -errno;
    rc = cap__netio_probe_start();
    if (rc != 0)
        return rc;
    return submit_poll(KICK, kickfd, false);
}

/* The parent's ring, in a fork's child (netio.h): unmapped and closed
 * here, untouched (its polls, the parent's files, are the parent's). */
static void uring_forget(void)
{
    cap__ownfd_close_ring(&ring);
    cap__ownfd_close(kickfd);
    kickfd = -1;
    sq_lock = (cap__spin)CAP__SPIN_INIT;
    atomic_store(&kicked, 0);
    exiting = false;
    cap__netio_probe_forget();
}

/* f->lock held, gen current (netio.h). */
static int uring_arm(cap__fd *f, int fd, uint32_t gen)
{
    if (atomic_load(&f->kind) == CAP__FD_STREAM && cap__fd_has(f, CAP__FDF_OWNED)) {
        /* Nothing to submit yet: interest() arms it when a waiter links. */
        __atomic_store_n(&f->backend_slot, LAZY, __ATOMIC_SEQ_CST);
        return 0;
    }
    /* A file with no readiness to wait for would end each poll at once,
     * and handle() would re-arm it for ever (io/pollable.c). */
    if (!cap__netio_pollable(f, fd))
        return -EPERM;
    return arm_multishot(f, fd, gen);
}

/* f->lock held, the life gen ending (netio.h): every arming holds that
 * lock and checks the gen, so no poll of this life can follow. */
static void uring_disarm(cap__fd *f, int fd, uint32_t gen)
{
    uint32_t slot = __atomic_exchange_n(&f->backend_slot, 0, __ATOMIC_SEQ_CST);
    if ((slot & LAZY) && !(slot & LAZY_ARMED))
        return; /* no poll submitted */
    uint64_t data = (slot & LAZY) ? lazy_data(fd, gen) : poll_data(fd, gen, slot_epoch(slot));
    if (submit_poll(data, fd, true) == 0)
        __atomic_store_n(&f->backend_slot, CANCELLED | (slot & OWNER_MASK), __ATOMIC_SEQ_CST);
}

/* Before the close of f, disarmed (see the top): once the kernel thread
 * that armed its poll has let go of the file. */
static void uring_release(cap__fd *f, int fd)
{
    (void)fd;
    uint32_t slot = __atomic_exchange_n(&f->backend_slot, 0, __ATOMIC_SEQ_CST);
    uint32_t owner = (slot & OWNER_MASK) >> OWNER_SHIFT;
    if (!(slot & CANCELLED) || owner == 0 || (owner_here() >> OWNER_SHIFT) == owner)
        return;
    for (int i = 0; i < cap__rt.nworkers; i++) {
        cap__worker *w = &cap__rt.workers[i];
        if ((owner != OWNER_ANY && (uint32_t)w->id + 1 != owner) || w == cap__worker_self())
            continue;
        pid_t tid = atomic_load(&w->tid);
        if (tid == 0)
            continue; /* not started, or gone */
        uint32_t before = atomic_load_explicit(&w->kicks_taken, memory_order_acquire);
        cap__sig_kick(tid);
        while (atomic_load_explicit(&w->kicks_taken, memory_order_acquire) == before &&
               atomic_load(&w->tid) != 0)
            cap__kernel_yield();
    }
}

/* Cancels the requests with user_data data (or as flags say), returning
 * once they are cancelled (IORING_REGISTER_SYNC_CANCEL, Linux 6.0; a
 * cancel SQE may be finished later in an io-wq worker): 0, -ENOENT when
 * none was in flight, another -errno when the kernel cannot. */
static int sync_cancel(uint64_t data, unsigned flags)
{
    struct io_uring_sync_cancel_reg reg = { .addr = data, .flags = flags,
                                            .timeout = { .tv_sec = -1, .tv_nsec = -1 } };
    return io_uring_register_sync_cancel(&ring, &reg);
}

/* at_exit's re-arm of a runtime-owned descriptor the cancel ended. */
static void rearm_internal(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if (!cap__fd_has(f, CAP__FDF_INTERNAL) || !cap__fd_has(f, CAP__FDF_REGISTERED) ||
        !cap__spin_lock_within(&f->lock, CAP__EXIT_LOCK_NS))
        return;
    uint32_t gen = atomic_load(&f->gen);
    if (cap__fd_has(f, CAP__FDF_REGISTERED) && !lazy(f))
        arm_multishot(f, fd, gen);
    cap__spin_unlock(&f->lock);
}

/* The process is ending (netio.h; see the top). One synchronous cancel
 * of every request, in the hold of sq_lock that stops new polls, so that
 * none is added between the two. The kick's poll, cancelled too, is
 * re-armed by the harvest that sees it end (handle), so idle workers
 * still wake. If the lock stays taken (netio.h), nothing is cancelled:
 * the files close when the kernel ends the dead ring's requests, as
 * before. */
static bool uring_at_exit(void)
{
    if (!cap__spin_lock_within(&sq_lock, CAP__EXIT_LOCK_NS))
        return false;
    exiting = true;
    /* Synchronous (Linux 6.0): a cancel SQE may be finished in an io-wq
     * worker, after the re-arms below, which it then cancelled as well
     * (a disk ring's completions went unseen: a late read hung). */
    int rc = sync_cancel(0, IORING_ASYNC_CANCEL_ANY);
    if (rc < 0 && rc != -ENOENT) { /* -ENOENT: nothing was in flight */
        /* An older kernel (or a cancel that failed): as before, the
         * kernel ends the polls after the exit. */
        exiting = false;
        cap__spin_unlock(&sq_lock);
        return false;
    }
    cap__spin_unlock(&sq_lock);
    /* The runtime's own descriptors are watched on: arming reports the
     * readiness they have, so nothing between the cancel and now is
     * lost. A late completion of the cancelled poll (-ECANCELED) re-arms
     * nothing (handle). */
    exit_rearm = true;
    cap__fd_foreach(rearm_internal, NULL);
    exit_rearm = false;
    return true; /* no poll of the program's is added from now on */
}

/* exec_begin's visit: a close-on-exec descriptor's multishot poll is
 * cancelled, synchronously where the kernel can (Linux 6.0), and marked
 * PAUSED. If the exec goes on, its de_thread ends the other kernel
 * threads, which end their cancelled polls (letting go of the files) in
 * their exit, before the new program runs; the exec'ing thread's own
 * polls Linux cancels itself. New arms of other workers meanwhile are not
 * held back (such a poll lingers as before), but for lazily armed ones:
 * pause_lazy. */
static void pause_lazy(int fd, cap__fd *f);

static void pause_for_exec(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if (!cap__fd_has(f, CAP__FDF_REGISTERED) || cap__fd_has(f, CAP__FDF_INTERNAL))
        return;
    long fdfl = syscall(SYS_fcntl, fd, F_GETFD);
    if (fdfl < 0 || !(fdfl & FD_CLOEXEC))
        return;
    cap__spin_lock(&f->lock);
    uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
    if (cap__fd_has(f, CAP__FDF_REGISTERED) && lazy(f)) {
        pause_lazy(fd, f);
    } else if (cap__fd_has(f, CAP__FDF_REGISTERED) && !(slot & (CANCELLED | PAUSED))) {
        uint64_t data = poll_data(fd, atomic_load(&f->gen), slot_epoch(slot));
        __atomic_store_n(&f->backend_slot, slot | PAUSED, __ATOMIC_SEQ_CST);
        int rc = sync_cancel(data, 0);
        if (rc < 0 && rc != -ENOENT)
            submit_poll(data, fd, true); /* an older kernel */
    }
    cap__spin_unlock(&f->lock);
}

/* A lazily armed f (f->lock held): marked LAZY_PAUSED, so that no waiter
 * arms it until the exec fails, and its one-shot poll, if armed,
 * cancelled. One that fires before the cancel finds it completes with
 * its events, and handle() keeps the mark and arms nothing. */
static void pause_lazy(int fd, cap__fd *f)
{
    uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
    __atomic_store_n(&f->backend_slot, LAZY | LAZY_PAUSED, __ATOMIC_SEQ_CST);
    if (!(slot & LAZY_ARMED))
        return;
    uint64_t data = lazy_data(fd, atomic_load(&f->gen));
    int rc = sync_cancel(data, 0);
    if (rc < 0 && rc != -ENOENT)
        submit_poll(data, fd, true); /* an older kernel */
}

/* exec_failed's visit: a paused poll is armed again, at the next epoch,
 * unless the descriptor was closed meanwhile (its disarm cleared PAUSED);
 * a paused lazy one is armed if it has waiters. */
static void resume_after_exec(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    uint32_t seen = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
    if (!(seen & (lazy(f) ? LAZY_PAUSED : PAUSED)))
        return;
    cap__spin_lock(&f->lock);
    uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
    if (!cap__fd_has(f, CAP__FDF_REGISTERED)) {
        /* closed meanwhile: nothing to arm */
    } else if (lazy(f) && (slot & LAZY_PAUSED)) {
        __atomic_store_n(&f->backend_slot, LAZY, __ATOMIC_SEQ_CST);
        lazy_arm(f, fd, atomic_load(&f->gen));
    } else if (!lazy(f) && (slot & PAUSED)) {
        arm_multishot(f, fd, atomic_load(&f->gen));
    }
    cap__spin_unlock(&f->lock);
}

static void uring_exec_begin(void)
{
    cap__fd_foreach(pause_for_exec, NULL);
}

static void uring_exec_failed(void)
{
    cap__fd_foreach(resume_after_exec, NULL);
}

/* A waiter was just linked on f (under f->lock). */
static void uring_interest(cap__fd *f, int fd)
{
    if (lazy(f))
        lazy_arm(f, fd, atomic_load(&f->gen));
}

/* kicked: set from a kick's write until a harvest drains the eventfd,
 * and cleared only after the drain (netio_epoll.c, kick, says why). */
static void kick(void)
{
    if (atomic_exchange(&kicked, 1) == 0) {
        uint64_t one = 1;
        syscall(SYS_write, kickfd, &one, sizeof one);
    }
}

/* One completion. pri_urgent: a POLLPRI in res may be urgent data (see
 * urgency_unsure), which ends the drained-socket shortcut (NODRAIN). */
static void handle(uint64_t data, int res, unsigned flags, bool pri_urgent)
{
    if (data == KICK) {
        uint64_t v;
        syscall(SYS_read, kickfd, &v, sizeof v);
        atomic_store(&kicked, 0); /* after the drain */
        if (!(flags & IORING_CQE_F_MORE))
            submit_poll(KICK, kickfd, false);
        return;
    }
    if (data == KICK - 1)
        return; /* a cancel's own completion */
    int fd = (int)(data & DATA_FD_MASK);
    uint32_t gen = (uint32_t)(data >> 32);
    if (data & WIDEN_TAG) {
        /* A widening's own completion (lazy_arm). -ENOENT: the poll had
         * ended, and its completion re-arms. -EALREADY: the poll was
         * being woken, and may go on waiting with its old events: widen
         * it again, while it is still this life's and armed. */
        cap__fd *f = cap__fd_peek(fd);
        if (res != -EALREADY || f == NULL)
            return;
        cap__spin_lock(&f->lock);
        uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
        if (atomic_load(&f->gen) == gen && (slot & LAZY) && (slot & LAZY_ARMED))
            submit_op(OP_WIDEN, data & ~WIDEN_TAG, fd, slot >> ARMED_SHIFT);
        cap__spin_unlock(&f->lock);
        return;
    }
    if (res > 0) {
        unsigned dirs = 0;
        if (res & (POLLIN | POLLPRI | POLLRDHUP | POLLHUP | POLLERR))
            dirs |= CAP__IO_RBIT;
        if ((res & (POLLRDHUP | POLLHUP | POLLERR)) || ((res & POLLPRI) && pri_urgent))
            dirs |= CAP__IO_NODRAIN;
        if (res & (POLLOUT | POLLHUP | POLLERR))
            dirs |= CAP__IO_WBIT;
        cap__io_ready(fd, gen, dirs);
    }
    if (data & LAZY_TAG) {
        /* A one-shot poll ended (fired, or failed): re-arm it for the
         * waiters it did not wake. Arming, interest() and this all hold
         * f->lock, and a waiter links before its interest(), so either
         * this sees its link or it finds no poll armed and arms one. */
        cap__fd *f = cap__fd_peek(fd);
        if (f == NULL || res == -ECANCELED) /* removed by disarm */
            return;
        cap__spin_lock(&f->lock);
        if (atomic_load(&f->gen) == gen && lazy(f)) {
            /* (one that fired as an exec's cancel came stays paused) */
            uint32_t paused =
                __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST) & LAZY_PAUSED;
            __atomic_store_n(&f->backend_slot, LAZY | paused, __ATOMIC_SEQ_CST);
            if (res < 0) /* could not poll: let the waiters retry */
                cap__io_wake_all_locked(f, 0);
            else
                lazy_arm(f, fd, gen);
        }
        cap__spin_unlock(&f->lock);
        return;
    }
    if (!(flags & IORING_CQE_F_MORE) && res != -ECANCELED) {
        /* A multishot poll ended (the CQ was full). Wake everyone:
         * readiness between the end and the re-arm would otherwise be
         * lost. Re-armed under f->lock while the life is current, as
         * arm() arms (netio.h): a close's cancel may have found nothing.
         * A poll that failed is not: its re-arm would fail at once, for
         * the whole life; the life is unpollable, as after a refused arm,
         * and the woken waiters find that out. */
        cap__fd *f = cap__fd_peek(fd);
        if (f == NULL || atomic_load(&f->gen) != gen)
            return;
        cap__io_ready(fd, gen, CAP__IO_RBIT | CAP__IO_WBIT);
        cap__spin_lock(&f->lock);
        uint32_t slot = __atomic_load_n(&f->backend_slot, __ATOMIC_SEQ_CST);
        /* Only the poll armed now (an earlier one's end re-arms nothing,
         * and one paused for an exec is re-armed if the exec fails). */
        bool current = slot_epoch(slot) == ((data >> DATA_EPOCH_SHIFT) & EPOCH_BITS) &&
                       !(slot & (PAUSED | CANCELLED));
        if (atomic_load(&f->gen) == gen && cap__fd_has(f, CAP__FDF_REGISTERED) && !lazy(f) &&
            current) {
            if (res >= 0) {
                /* The runtime's own stay watched after an exit's cancel
                 * too (at_exit): a disk ring's eventfd whose poll ended
                 * so was never armed again, and a late read hung. */
                exit_rearm = cap__fd_has(f, CAP__FDF_INTERNAL);
                arm_multishot(f, fd, gen);
                exit_rearm = false;
            } else {
                cap__fd_clear(f, CAP__FDF_REGISTERED);
                cap__fd_set(f, CAP__FDF_UNPOLLABLE);
            }
        }
        cap__spin_unlock(&f->lock);
    }
}

/* Whether a completion's POLLPRI may be no more than the wake-up's key,
 * on a descriptor where urgent data would matter. A poll completion that
 * a wake-up with a key triggered reports that key (the events the waker
 * names), not a fresh poll of the file; and a socket's data-ready wake-up
 * names POLLIN and POLLPRI together, whether urgent data came or plain
 * data (every arrival on a TCP or UDP socket). Taken as it reads,
 * POLLPRI marked every such socket NODRAIN at its first arrival: each
 * read of a TCP socket that waited then made a failed attempt and the
 * urgent-mark check (io/wait.c), two system calls more than on epoll,
 * whose harvest polls the file; each EAGAIN of a datagram socket a poll
 * for a shutdown (intercept/rw.c). POLLPRI counts only on a TCP socket
 * (CAP__FDF_DRAINS: a read stops short at an urgent mark); on any other
 * descriptor NODRAIN comes from hang-ups and errors alone, which carry
 * their own keys. For a completion of a multishot poll (the lazily
 * armed are pipes) that names POLLPRI without a hang-up or an error, on
 * a TCP socket of the current life not marked NODRAIN yet, *look is set:
 * harvest() asks the kernel afresh, in one poll of the batch, and the
 * POLLPRI counts only if the fresh poll shows it. That poll comes after
 * the wake-up, as epoll's does: urgent data shows in it unless its byte
 * was read meanwhile, as under epoll. Returns whether POLLPRI counts
 * (before the look, if one is asked for). */
static bool pri_counts(uint64_t data, int res, bool *look)
{
    *look = false;
    if (data >= KICK - 1 || (data & (LAZY_TAG | WIDEN_TAG)) || res <= 0 || !(res & POLLPRI) ||
        (res & (POLLRDHUP | POLLHUP | POLLERR)))
        return true; /* nothing to decide: NODRAIN as res says */
    cap__fd *f = cap__fd_peek((int)(data & DATA_FD_MASK));
    if (f == NULL || atomic_load(&f->gen) != (uint32_t)(data >> 32) ||
        cap__fd_has(f, CAP__FDF_NODRAIN))
        return true; /* a stale completion, or marked already */
    if (!cap__fd_has(f, CAP__FDF_DRAINS))
        return false;
    *look = true;
    return true;
}

/* Completions taken off the CQ at a time, before any is handled; and
 * the most one harvest handles, so that a storm of readiness cannot keep
 * the worker from the threads it woke (what is left stays in the CQ, or
 * its overflow, for the next look: a wait returns at once on it, and
 * the ring's descriptor polls readable). */
enum { HARVEST_BATCH = 64, HARVEST_MAX = 4 * 2 * RING_ENTRIES };

static void harvest(int64_t timeout_ns)
{
    struct io_uring_cqe *cqe = NULL;
    if (timeout_ns != 0) {
        struct __kernel_timespec ts, *tsp = NULL;
        if (timeout_ns > 0) {
            ts.tv_sec = timeout_ns / 1000000000;
            ts.tv_nsec = timeout_ns % 1000000000;
            tsp = &ts;
        }
        io_uring_wait_cqes(&ring, &cqe, 1, tsp, NULL);
    }
    for (unsigned handled = 0; handled < HARVEST_MAX;) {
        /* Completions leave the CQ before they are handled: handling
         * re-arms ended multishot polls, and a re-armed poll whose file is
         * ready posts at once. Into a CQ still full of unreleased entries
         * it overflowed and ended again, to be re-armed by the next pass,
         * for ever once more than half a CQ of them circulated (a
         * readiness storm on thousands of sockets hung the worker here:
         * io/readiness_storm_past_the_queue). */
        struct {
            uint64_t data;
            int res;
            unsigned flags;
        } batch[HARVEST_BATCH];
        unsigned head, n = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            batch[n].data = cqe->user_data;
            batch[n].res = cqe->res;
            batch[n].flags = cqe->flags;
            if (++n == HARVEST_BATCH)
                break;
        }
        io_uring_cq_advance(&ring, n);
        struct pollfd look[HARVEST_BATCH];
        unsigned looked[HARVEST_BATCH], nlook = 0;
        bool pri_urgent[HARVEST_BATCH];
        for (unsigned i = 0; i < n; i++) {
            bool to_look;
            pri_urgent[i] = pri_counts(batch[i].data, batch[i].res, &to_look);
            if (to_look) {
                look[nlook] = (struct pollfd){ .fd = (int)(batch[i].data & DATA_FD_MASK),
                                               .events = POLLPRI };
                looked[nlook++] = i;
            }
        }
        /* One poll for the whole batch, as epoll_wait polls each ready
         * item as it reports it. If it fails, every POLLPRI counts. */
        if (nlook > 0 && cap__sys6(SYS_poll, (long)look, nlook, 0, 0, 0, 0) >= 0)
            for (unsigned k = 0; k < nlook; k++)
                pri_urgent[looked[k]] = (look[k].revents & (POLLPRI | POLLNVAL)) != 0;
        for (unsigned i = 0; i < n; i++)
            handle(batch[i].data, batch[i].res, batch[i].flags, pri_urgent[i]);
        handled += n;
        if (n == HARVEST_BATCH)
            continue;
        /* Completions the full CQ could not take wait in the kernel's
         * overflow list (among them the ends of multishot polls, to be
         * re-armed) until a GETEVENTS entry moves them over: the look of
         * a busy worker, or of one woken through wait_fd, makes none. */
        if (!io_uring_cq_has_overflow(&ring))
            break;
        io_uring_get_events(&ring);
    }
}

const cap__netio cap__netio_uring = {
    .name = "uring",
    .edge = true,
    .start = uring_start,
    .forget = uring_forget,
    .arm = uring_arm,
    .disarm = uring_disarm,
    .release = uring_release,
    .interest = uring_interest,
    .harvest = harvest,
    .kick = kick,
    .at_exit = uring_at_exit,
    .exec_begin = uring_exec_begin,
    .exec_failed = uring_exec_failed,
};

/* SPDX-License-Identifier: MIT */
/*
 * Parking user threads on descriptors, and waking them from backend events
 * (see io.h for the try-then-park protocol, wait.h for the waiter sorts).
 *
 * Invariants:
 *  - f->seq[dir] only grows, and only under f->lock (cap__io_ready); a
 *    waiter links itself only if seq still equals its pre-attempt
 *    snapshot, under the same lock, so an event is either seen by the
 *    snapshot check or finds the waiter linked.
 *  - every waker unlinks the record before unparking, under f->lock; a
 *    thread that timed out relinks nothing and unlinks itself only if it
 *    is still linked (waitaddr.c's pattern).
 *  - an exclusive wake that loses to a timeout (cap__unpark false) moves
 *    on to the next exclusive waiter: a wake-up is never dropped.
 *  - signals (sigintr.h): a registered interruptible call keeps its waiter
 *    record or group for the whole call, so the interrupt callback always
 *    finds it; the callback unlinks the record (or fires the group) under
 *    the same lock as an event would, and the waiter checks cap__sig_hit
 *    under that lock before every park. A parked-only call is registered
 *    from just before it locks the descriptor to park until it wakes, and
 *    takes a delivery only if the callback finds its record linked, or
 *    unlinked by an event and either not resumed yet or resumed after the
 *    delivery was numbered.
 *  - every event that unlinks an exclusive record with result 0 or
 *    EBADF (a close), or fires a group, marks it CAP__SIG_WOKEN under the lock of the
 *    unlink; a mark whose thread the unpark did not reach (it timed out,
 *    or a cancel claimed it) is put back to 0. A woken registered call,
 *    as it resumes, replaces the mark with cap__sig_count() (under the
 *    group's lock; an exclusive record's with a sequentially consistent
 *    store, io_wait) and settles on that count before it acts on the
 *    event (sigintr.h, "Ordering").
 *  - cancellation (in->cancel, src/sync/cancel.h): the park is a
 *    cancellable one; a cancel that claims the thread leaves its record
 *    linked, and the thread unlinks it exactly as after a timeout. An
 *    event that finds the claimed record passes its wake-up on (unpark
 *    fails). ECANCELED goes up to the wrapper, which acts only after the
 *    call left its signal registry entry and freed what it allocated.
 */
#include "io/wait.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/io.h"
#include "io/netio.h"
#include "io/pipe.h"
#include "io/sigdirect.h"
#include "io/sigfd.h"
#include "io/sigintr.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "sync/cancel.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/sigctx.h"

atomic_long cap__io_inflight;

static void turn_end(bool poll)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        return;
    self->io_turns = 0;
    if (poll)
        cap__yield_polling(self);
    else
        cap__yield(self);
}

void cap__io_turn_end(void)
{
    turn_end(true);
}

void cap__io_hits_turn_end(void)
{
    turn_end(false);
}

/* Threads parked on descriptors, in sleeps and in polls are counted per
 * worker (cap__worker.io_waits), each count written only by its own
 * worker: a park and its resumption cost two plain stores instead of two
 * locked read-modify-writes of one line that every worker writes (with
 * two workers that line crossed CPUs twice per request). A thread that
 * migrates ends its wait on another worker, whose count then goes below
 * zero; only the sum means anything. */
static inline void count_waits(long d)
{
    cap__worker *w = cap__worker_self();
    atomic_store_explicit(&w->io_waits,
                          atomic_load_explicit(&w->io_waits, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

/* Whether some I/O could complete: a hint for the busy poll (find_work)
 * and the harvest before an idle spin, read every so often. The loads are
 * relaxed and not a snapshot, so a wait that begins or ends meanwhile may
 * be missed once; the next look, or the idle worker's blocking harvest,
 * sees it. */
bool cap__io_pending(void)
{
    return atomic_load_explicit(&cap__io_inflight, memory_order_relaxed) > 0 ||
           cap__io_fd_pending();
}

/* The part of cap__io_pending that only a harvest of the instance sees:
 * threads parked on descriptors, signals to dispatch or work a handler
 * left for the dispatch (as racy). */
bool cap__io_fd_pending(void)
{
    long n = 0;
    for (int i = 0; i < cap__rt.nworkers; i++)
        n += atomic_load_explicit(&cap__rt.workers[i].io_waits, memory_order_relaxed);
    return n > 0 || cap__sig_undispatched() ||
           atomic_load_explicit(&cap__sig_work_left, memory_order_relaxed);
}

/* ---- lists (caller holds f->lock) ------------------------------------- */

static void link_excl(cap__fd *f, cap__io_waiter *w)
{
    int d = w->dir;
    w->next = NULL;
    w->prev = f->tail[d];
    if (f->tail[d] != NULL)
        f->tail[d]->next = w;
    else
        f->head[d] = w;
    f->tail[d] = w;
    w->linked = true;
}

static void link_obs(cap__fd *f, cap__io_waiter *w)
{
    int d = w->dir;
    w->prev = NULL;
    w->next = f->obs[d];
    if (w->next != NULL)
        w->next->prev = w;
    f->obs[d] = w;
    f->observed |= (uint8_t)(1u << d);
    w->linked = true;
}

enum { OBSERVERS_WALKED = 16 };

short cap__io_waited_events(const cap__fd *f)
{
    enum {
        READ_EVENTS = POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND | POLLRDHUP,
        WRITE_EVENTS = POLLOUT | POLLWRNORM | POLLWRBAND,
    };
    short ev = 0;
    if (f->head[CAP__IO_READ] != NULL)
        ev |= POLLIN | POLLPRI | POLLRDHUP;
    if (f->head[CAP__IO_WRITE] != NULL)
        ev |= POLLOUT;
    for (int d = 0; d < 2; d++) {
        short mine = d == CAP__IO_READ ? READ_EVENTS : WRITE_EVENTS;
        /* Stops once nothing more could be added; and past a few
         * observers assumes the direction's usual events (an exclusive
         * waiter's), as every link walks this: 10,000 threads polling
         * one pipe took 0.5-2 s to park instead of 0.15 s. */
        int seen = 0;
        for (const cap__io_waiter *w = f->obs[d]; w != NULL && (ev & mine) != mine; w = w->next) {
            if (++seen > OBSERVERS_WALKED) {
                ev |= d == CAP__IO_READ ? POLLIN | POLLPRI | POLLRDHUP : POLLOUT;
                break;
            }
            ev |= w->events & mine;
        }
    }
    return ev;
}

static void unlink_waiter(cap__fd *f, cap__io_waiter *w)
{
    int d = w->dir;
    if (w->group == NULL) {
        if (w->prev != NULL)
            w->prev->next = w->next;
        else
            f->head[d] = w->next;
        if (w->next != NULL)
            w->next->prev = w->prev;
        else
            f->tail[d] = w->prev;
    } else {
        if (w->prev != NULL)
            w->prev->next = w->next;
        else
            f->obs[d] = w->next;
        if (w->next != NULL)
            w->next->prev = w->prev;
        if (f->obs[d] == NULL)
            f->observed &= (uint8_t)~(1u << d);
    }
    w->linked = false;
}

/* Unparks exclusive waiter w, which an event or a close unlinked (its
 * result set; f's lock held), marking it woken when the event brings it
 * something (result 0) or the close ends its wait (EBADF), as a delivery
 * numbered before either still interrupts the call (sigintr.h,
 * "Ordering": a handler that closes the descriptor its thread waits on
 * must not have that close reach the call first); a mark the unpark did
 * not deliver (a timeout or a cancel claimed the thread) is put back to
 * 0. Whether the unpark reached the thread. */
static inline bool unpark_excl(cap__io_waiter *w)
{
    w->woke = w->result == 0 || w->result == EBADF ? CAP__SIG_WOKEN : 0;
    if (cap__unpark(w->thread))
        return true;
    w->woke = 0;
    return false;
}

/* event: an event or a close fired it (not a signal); marked woken if
 * result 0. */
static void group_fire(cap__io_group *g, bool event, int result)
{
    cap__spin_lock(&g->lock);
    if (!g->fired) {
        g->fired = true;
        g->woke = event && result == 0 ? CAP__SIG_WOKEN : 0;
        if (g->parked)
            cap__unpark(g->thread); /* under g->lock, the lock it parked on */
    }
    cap__spin_unlock(&g->lock);
}

/* Wakes every observer of dir and the first exclusive waiter that is still
 * waiting (all of them when `all`). */
static void wake_dir(cap__fd *f, int d, int result, bool all)
{
    cap__io_waiter *w;
    /* `observed` first: obs[] is on the record's second line (fd.h). */
    while ((f->observed & (1u << d)) && (w = f->obs[d]) != NULL) {
        unlink_waiter(f, w);
        w->result = result;
        group_fire(w->group, true, result);
    }
    while ((w = f->head[d]) != NULL) {
        unlink_waiter(f, w);
        w->result = result;
        if (unpark_excl(w) && !all)
            break;
    }
}

/* wake_dir for an event in d when f has no observers in d (the request
 * path's wake-up): the first exclusive waiter still waiting, inline; the
 * head is unlinked without unlink_waiter's general cases. */
static inline void wake_first_excl(cap__fd *f, int d)
{
    cap__io_waiter *w;
    while ((w = f->head[d]) != NULL) {
        f->head[d] = w->next;
        if (w->next != NULL)
            w->next->prev = NULL;
        else
            f->tail[d] = NULL;
        w->linked = false;
        w->result = 0;
        if (unpark_excl(w))
            break;
    }
}

void cap__io_wake_dir_locked(cap__fd *f, int d, int result, bool all)
{
    wake_dir(f, d, result, all);
}

void cap__io_wake_all_locked(cap__fd *f, int result)
{
    wake_dir(f, CAP__IO_READ, result, true);
    wake_dir(f, CAP__IO_WRITE, result, true);
}

bool cap__io_has_waiters(const cap__fd *f)
{
    for (int d = 0; d < 2; d++)
        if (f->head[d] != NULL || ((f->observed & (1u << d)) && f->obs[d] != NULL))
            return true;
    return false;
}

void cap__io_ready(int fd, uint32_t gen, unsigned dirs)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || atomic_load(&f->gen) != gen)
        return;
    uint32_t fl = atomic_load_explicit(&f->flags, memory_order_relaxed);
    if (fl & CAP__FDF_INTERNAL) {
        void (*cb)(void *) = f->internal;
        if (cb != NULL)
            cb(f->internal_arg);
        return;
    }
    cap__spin_lock(&f->lock);
    if (atomic_load(&f->gen) == gen) {
        /* Before the seq bump that publishes it (drained_empty). */
        if (dirs & CAP__IO_NODRAIN)
            atomic_fetch_or(&f->flags, CAP__FDF_NODRAIN);
        for (int d = 0; d < 2; d++) {
            if (!(dirs & (1u << d)))
                continue;
            /* Else only ever written under f->lock: a release store, not
             * a locked add (every read event carries EPOLLOUT too, so
             * this ran twice per request). The release orders the NODRAIN
             * flag before it for lock-free readers of the snapshot. A
             * pipe's seq is also bumped without the lock (io/pipe.h). */
            if (fl & CAP__FDF_PIPE)
                atomic_fetch_add(&f->seq[d], 1);
            else
                atomic_store_explicit(&f->seq[d],
                                      atomic_load_explicit(&f->seq[d], memory_order_relaxed) + 1,
                                      memory_order_release);
            /* The write direction of a read event has nobody to wake,
             * nearly always: not even the call (its register saves). */
            if (f->observed & (1u << d))
                wake_dir(f, d, 0, false);
            else if (f->head[d] != NULL)
                wake_first_excl(f, d);
        }
    }
    cap__spin_unlock(&f->lock);
}

/* ---- registration -------------------------------------------------------- */

/* Arms f in the backend once per life (a private pipe stops being one
 * first: io/pipe.h). 0 or EPERM. */
static int arm(cap__fd *f, int fd, uint32_t gen)
{
    uint32_t fl = atomic_load(&f->flags);
    if (fl & CAP__FDF_LOCAL) {
        cap__pipe_escape(f, false);
        fl = atomic_load(&f->flags);
    }
    if (fl & CAP__FDF_REGISTERED)
        return 0;
    if (fl & CAP__FDF_UNPOLLABLE)
        return EPERM;
    /* Marked and armed in one hold of the lock that ends lives, only
     * while the life is still gen's (netio.h): an attempt of an ended life
     * (a dup2 onto the number since) must neither mark the newer one,
     * whose waiters would then never arm, nor register a poll or entry
     * that its life's disarm has already missed. Nor while a close is
     * under way (CAP__FDF_CLOSING, fd.h): its disarm is past, and the
     * life ends with no other, so a registration made now outlived the
     * close (an io_uring poll kept the socket open for good: its peer
     * never saw EOF). The caller parks unarmed, and the close's end wakes
     * it with EBADF. */
    cap__spin_lock(&f->lock);
    int rc = 0;
    if (atomic_load(&f->gen) == gen &&
        !(atomic_load(&f->flags) & (CAP__FDF_REGISTERED | CAP__FDF_CLOSING))) {
        cap__fd_set(f, CAP__FDF_REGISTERED);
        if (cap__netio_active->arm(f, fd, gen) != 0) {
            cap__fd_clear(f, CAP__FDF_REGISTERED);
            cap__fd_set(f, CAP__FDF_UNPOLLABLE);
            rc = EPERM;
        }
    }
    cap__spin_unlock(&f->lock);
    return rc; /* a gen moved on: the park sees it (EBADF) */
}

/* f, registered, is no longer watched by the backend: unpollable for the
 * rest of its life, as after a refused arm. Parked waiters would wait
 * for the backend for good: they try again, and wait the unwatched way.
 * f->lock held. */
static void unwatched_locked(cap__fd *f)
{
    cap__fd_clear(f, CAP__FDF_REGISTERED);
    cap__fd_set(f, CAP__FDF_UNPOLLABLE);
    cap__io_wake_all_locked(f, 0);
}

bool cap__io_unwatch(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL)
        return false;
    cap__spin_lock(&f->lock);
    bool watched = cap__fd_has(f, CAP__FDF_REGISTERED);
    if (watched) {
        /* The disarm is the one a close makes, without the close: the
         * backend stops watching; a late event of this life only wakes
         * someone. */
        cap__netio_active->disarm(f, fd, atomic_load(&f->gen));
        unwatched_locked(f);
    }
    cap__spin_unlock(&f->lock);
    return watched;
}

/* A descriptor whose lock stays taken (netio.h, CAP__EXIT_LOCK_NS) is
 * left as it is: its waiters wait on. */
static void unwatch_at_exit(int fd, cap__fd *f, void *arg)
{
    (void)fd;
    (void)arg;
    /* The runtime's own stay watched (the backend re-armed them). */
    if (!cap__fd_has(f, CAP__FDF_REGISTERED) || cap__fd_has(f, CAP__FDF_INTERNAL) ||
        !cap__spin_lock_within(&f->lock, CAP__EXIT_LOCK_NS))
        return;
    if (cap__fd_has(f, CAP__FDF_REGISTERED))
        unwatched_locked(f);
    cap__spin_unlock(&f->lock);
}

void cap__io_unwatch_all(void)
{
    cap__fd_foreach(unwatch_at_exit, NULL);
}

int cap__io_watch(int fd, void (*cb)(void *arg), void *arg)
{
    cap__fd_created(fd, CAP__FD_STREAM, 0);
    cap__fd *f = cap__fd_get(fd);
    if (f == NULL)
        return -ENOMEM;
    f->internal = cb;
    f->internal_arg = arg;
    cap__fd_set(f, CAP__FDF_INTERNAL);
    return arm(f, fd, atomic_load(&f->gen)) == 0 ? 0 : -EPERM;
}

/* ---- exclusive waits ----------------------------------------------------- */

static bool unlock_fd(void *arg)
{
    cap__spin_unlock(&((cap__fd *)arg)->lock);
    return true;
}

void cap__io_call_begin(cap__io_call *c, const cap__intr *in, bool parked_only)
{
    c->in = in;
    c->f = NULL;
    c->entered = false;
    c->parked_only = parked_only;
    c->sends = 0;
}

int cap__io_call_leave(cap__io_call *c)
{
    return c->entered ? cap__sig_leave(&c->sw) : 0;
}

/* Dispatch's interrupt of an exclusive waiter (under the registry's
 * locks). A parked-only call takes the delivery if this wakes it, if an
 * event woke it and it has not resumed yet, or if it resumed after the
 * delivery was numbered (the count it took then is above the number: it
 * settles on that count before it consumes anything, sigintr.h); one
 * that resumed before, or that timed out or was claimed by a cancel, is
 * running and refuses it. A registered call takes it anyway and sees it
 * before its next park, or as it settles.
 * A signal sent to the thread (hit 0, cap__sig_direct) is taken by a
 * parked call, or by a parked-only one that an event woke and that has
 * not resumed; with sig 0 it is a wake-up after which the call goes on
 * (a SA_RESTART handler), taken only if it finds the call parked. */
bool cap__io_interrupt_excl(void *arg)
{
    cap__io_call *c = arg;
    cap__fd *f = c->f;
    bool go_on = atomic_load(&c->sw.sig) == 0;
    uint64_t hit = atomic_load_explicit(&c->sw.hit, memory_order_relaxed);
    bool took = !c->parked_only && !go_on;
    cap__spin_lock(&f->lock);
    if (c->w.linked) {
        unlink_waiter(f, &c->w);
        c->w.result = go_on ? 0 : EINTR;
        /* Going on, it is woken as by an event: a signal that comes
         * before it resumes still interrupts it. */
        c->w.woke = go_on ? CAP__SIG_WOKEN : 0;
        if (cap__unpark(c->w.thread))
            took = true;
    } else if (!go_on) {
        /* woke: see cap__io_waiter; hit is the delivery's number + 1 */
        uint64_t woke = __atomic_load_n(&c->w.woke, __ATOMIC_SEQ_CST);
        if (hit != 0 ? woke >= hit : woke == CAP__SIG_WOKEN)
            took = true;
    }
    cap__spin_unlock(&f->lock);
    return took;
}

/* cap__io_wait once w is chosen and the call is registered if it is to be. */
__attribute__((always_inline)) static inline int
park_on_fd(cap__io_ticket *tk, cap__fd *f, cap__io_waiter *w, cap__io_call *c, uint64_t deadline,
           bool priv, bool registered, bool unregistered)
{
    cap__spin_lock(&f->lock);
    *w = (cap__io_waiter){ .thread = cap__current(), .dir = tk->dir };
    if (atomic_load(&f->gen) != tk->gen) {
        cap__spin_unlock(&f->lock);
        return EBADF;
    }
    if (atomic_load(&f->seq[tk->dir]) != tk->seq) {
        cap__spin_unlock(&f->lock);
        return 0;
    }
    /* Not for a parked-only call: dispatch sets sig before its callback
     * looks for the record, and refuses the delivery if it finds none;
     * but a signal sent to the thread (hit 0) that it found pending as
     * it registered (io/sigintr.c, enter_pending) is for this park. */
    if (registered && cap__sig_hit(&c->sw) &&
        (c->entered || atomic_load_explicit(&c->sw.hit, memory_order_relaxed) == 0)) {
        cap__spin_unlock(&f->lock);
        return EINTR;
    }
    /* Woken by sends to its thread (in.wakes: an epoll set holding a
     * signalfd): one counted since its look, before it registered or
     * before this lock, is looked at first (io/sigfd.h). After this
     * lock the send's wake-up finds the record linked. */
    if (registered && __builtin_expect(c->sw.in.wakes != 0, 0) &&
        atomic_load(&w->thread->sig_sends) != c->sends) {
        cap__spin_unlock(&f->lock);
        return 0;
    }
    /* A parked-only call that skipped the registry: the program's first
     * handler is coming (sigintr.h), so try again and register. Relaxed:
     * the sweep set the flag before it took this lock. */
    if (unregistered && atomic_load_explicit(&cap__sig_handled, memory_order_relaxed) != 0) {
        cap__spin_unlock(&f->lock);
        return 0;
    }
    link_excl(f, w);
    if (priv) {
        /* The link, then a second look at seq (Dekker with the transfer
         * on the other end, which bumps seq and then looks for us). */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&f->seq[tk->dir]) != tk->seq) {
            unlink_waiter(f, w);
            cap__spin_unlock(&f->lock);
            return 0;
        }
    } else if (cap__netio_active->interest != NULL) {
        cap__netio_active->interest(f, tk->fd);
    }
    count_waits(1);
    bool cancel = c != NULL && c->in != NULL && c->in->cancel;
    enum cap__park_reason why = tk->dir == CAP__IO_READ ? CAP__PARK_IO_READ : CAP__PARK_IO_WRITE;
    /* Two direct calls, not one through a chosen pointer. */
    int rc = cancel ? cap__park_cancellable(why, f, deadline, unlock_fd, f)
                    : cap__park(why, f, deadline, unlock_fd, f);
    count_waits(-1);
    if (rc != 0) {
        cap__spin_lock(&f->lock);
        if (w->linked)
            unlink_waiter(f, w);
        cap__spin_unlock(&f->lock);
        return rc == ETIMEDOUT || rc == ECANCELED ? rc : 0;
    }
    return w->result;
}

/* cap__io_wait, inline into cap__io_do_wait (the request path's one park). */
__attribute__((always_inline)) static inline int io_wait(cap__io_ticket *tk, uint64_t deadline,
                                                         cap__io_call *c)
{
    cap__fd *f = tk->f;
    /* A private pipe is not armed: a transfer on its other end wakes us
     * (io/pipe.h). The first park on its end announces itself and tries
     * once more. */
    uint32_t fl = atomic_load_explicit(&f->flags, memory_order_relaxed);
    bool priv = (fl & CAP__FDF_LOCAL) != 0;
    if (priv && !(fl & CAP__FDF_WAITED)) {
        atomic_fetch_or(&f->flags, CAP__FDF_WAITED);
        return 0;
    }
    /* Armed already for this life, nearly always: no call to arm. */
    if (!priv && !(fl & CAP__FDF_REGISTERED) && arm(f, tk->fd, tk->gen) != 0)
        return EPERM;
    /* Which record, and how the call is registered for signals; then the
     * one park (inline: the only call site). */
    cap__io_waiter local, *w = &local;
    bool unregistered = false, leave = false;
    if (c != NULL) {
        w = &c->w;
        if (c->in != NULL && !c->entered) {
            c->f = f;
            c->w.linked = false;
            c->w.woke = 0; /* not the mark of an earlier park's (interrupt_excl) */
            if (!c->parked_only) {
                /* first park: one descriptor per call */
                cap__sig_enter(&c->sw, c->in, cap__io_interrupt_excl, c);
                c->entered = true;
            } else if (atomic_load_explicit(&cap__sig_handled, memory_order_relaxed) == 0) {
                /* Parked-only: registered for this park alone (sigintr.h),
                 * and not at all before the program's first signal
                 * handler (cap__sig_handled). */
                unregistered = true;
            } else {
                cap__sig_enter(&c->sw, c->in, cap__io_interrupt_excl, c);
                leave = true;
            }
        }
    }
    /* A call registered for its whole length (a signalfd read, a connect)
     * parks again after a wake-up that was not its event, perhaps by a
     * signal sent to its thread whose handler has SA_RESTART: the
     * sender's interrupt (cap__io_interrupt_excl) woke it to go on, and
     * nothing else delivers the signal before the call ends. Delivered
     * here, before the park, as a semaphore wait does (sigintr.h); one
     * without SA_RESTART marks the call, which then ends with EINTR. The
     * handler of a SIGUSR2 sent to a thread in a signalfd read ran only
     * once the read ended. */
    if (c != NULL && c->entered && !leave)
        cap__sig_call_pending(&c->sw, &c->sw.thread->sig_pending);
    int rc = park_on_fd(tk, f, w, c, deadline, priv, c != NULL && (c->entered || leave),
                        unregistered);
    /* Woken by an event while registered: a delivery numbered before the
     * call resumed (now) may have been meant for it; it is settled before
     * the call consumes anything (sigintr.h, "Ordering"). The mark was
     * written before the unpark that resumed us. */
    if ((rc == 0 || rc == EBADF) && c != NULL && (c->entered || leave) && w->woke != 0) {
        /* Against interrupt_excl, without f's lock: the store and its
         * load of woke, and dispatch's store of sig and our load of it
         * (in cap__sig_hit_first), are sequentially consistent, so
         * either the callback sees now, or this call sees the delivery
         * the callback took; one it took numbered after now found the
         * call running and interrupts nothing. */
        uint64_t now = cap__sig_count();
        __atomic_store_n(&w->woke, now, __ATOMIC_SEQ_CST);
        cap__sig_settle(&c->sw, now);
        if (cap__sig_hit_first(&c->sw, now))
            rc = EINTR;
    }
    if (leave) {
        /* A signal sent to the thread and delivered as it left, whose
         * handler interrupts the call: it ends here, not parks again. */
        int direct = 0;
        cap__sig_leave_direct(&c->sw, &direct);
        if (direct != 0 && rc == 0)
            rc = EINTR;
    }
    return rc;
}

int cap__io_wait(cap__io_ticket *tk, uint64_t deadline, cap__io_call *c)
{
    return io_wait(tk, deadline, c);
}

void cap__io_handoff(cap__fd *f, int fd, int dir)
{
    if (__atomic_load_n(&f->head[dir], __ATOMIC_RELAXED) == NULL)
        return;
    /* A private pipe must not be polled (io/pipe.h): the next one just
     * tries. */
    struct pollfd p = { .fd = fd, .events = dir == CAP__IO_READ ? POLLIN : POLLOUT };
    if (!cap__fd_has(f, CAP__FDF_LOCAL) && cap__sys6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) <= 0)
        return;
    cap__spin_lock(&f->lock);
    cap__io_waiter *w;
    while ((w = f->head[dir]) != NULL) {
        unlink_waiter(f, w);
        w->result = 0;
        if (unpark_excl(w))
            break;
    }
    cap__spin_unlock(&f->lock);
}

static void rewake_exclusive(int fd, cap__fd *f, void *arg)
{
    (void)fd;
    (void)arg;
    cap__spin_lock(&f->lock); /* every record, even without waiters: sigintr.h */
    for (int d = 0; d < 2; d++) {
        cap__io_waiter *w;
        while ((w = f->head[d]) != NULL) {
            unlink_waiter(f, w);
            w->result = 0;
            unpark_excl(w);
        }
    }
    cap__spin_unlock(&f->lock);
}

void cap__io_rewake_exclusive(void)
{
    cap__fd_foreach(rewake_exclusive, NULL);
}

/* Blocks the worker's kernel thread in poll(2): the fallback for
 * descriptors the backend refused. */
static void block_in_poll(int fd, int dir, uint64_t deadline)
{
    struct pollfd p = { .fd = fd, .events = dir == CAP__IO_READ ? POLLIN : POLLOUT };
    struct timespec ts, *tsp = NULL;
    if (deadline != CAP__FOREVER) {
        uint64_t now = cap__now();
        ts = cap__ns_to_timespec(deadline > now ? deadline - now : 0);
        tsp = &ts;
    }
    cap__sys6(SYS_ppoll, (long)&p, 1, (long)tsp, 0, 0, 0);
}

/* Whether fd, a descriptor the runtime did not make non-blocking, is
 * non-blocking now though the application's view says not: its file's
 * O_NONBLOCK was set where the wrappers do not see (another process
 * sharing the file, a raw fcntl system call). The kernel's call would then
 * have said EAGAIN, and so does the wrapper's. Asked of the kernel before
 * the first park only: a call that would wait anyway can afford it. */
static bool file_nonblock_unseen(cap__fd *f, int fd)
{
    if (fd < 0 || cap__fd_has(f, CAP__FDF_OWNED | CAP__FDF_INTERNAL))
        return false;
    long fl = cap__sys6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* Whether a TCP read that just said EAGAIN stopped at an urgent mark
 * with data past it. At the mark, Linux's read gives up with EAGAIN
 * whenever a signal is pending on the kernel thread (tcp_recvmsg: urgent
 * data stops a read that has copied nothing if a signal is pending), and
 * an io_uring completion waiting to run on the thread (task work: polls
 * this worker armed, under CAP_NETIO=uring, or its disk ring) counts as
 * one. The event that announced the data may have been harvested
 * already, and a park would then wait for one that never comes. The
 * pending work ran as the call returned, so the attempt is made again if
 * the kernel says the socket is at the mark (SIOCATMARK) and readable
 * (its poll counts the bytes past the urgent one, unless they are read
 * inline). Only on TCP sockets the backend reported urgent data,
 * a hang-up or an error on (CAP__FDF_NODRAIN): two system calls on that
 * rare path. A read that found nothing at the mark moves past it, unless
 * the urgent byte itself has not come: its arrival brings an event. */
static bool urgent_mark_hides_data(cap__fd *f, int fd, int dir)
{
    if (dir != CAP__IO_READ || fd < 0 || !cap__fd_has(f, CAP__FDF_DRAINS) ||
        !cap__fd_has(f, CAP__FDF_NODRAIN))
        return false;
    int at_mark = 0;
    if (cap__sys6(SYS_ioctl, fd, SIOCATMARK, (long)&at_mark, 0, 0, 0) != 0 || !at_mark)
        return false;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return cap__sys6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) == 1 &&
           (p.revents & (POLLIN | POLLHUP | POLLERR));
}

/* The handlers of signals sent to the calling thread alone that it has run
 * so far, of those that interrupt a call waiting with in (io/sigdirect.h,
 * cap__sig_runs); 0 for a call that signals do not interrupt.
 *
 * A parked-only transfer (sigintr.h) is registered for signals only while
 * it parks. Woken for nothing (an event whose data another reader took;
 * the sweep before the program's first handler, which wakes unregistered
 * parks), it runs until it parks again, and a signal sent to its thread
 * meanwhile has its handler run there, as at any safe point, outside the
 * registry: the call used to wait on though the handler ran inside it,
 * where Linux's returns EINTR (a pthread_kill meant to end a blocked read
 * was lost so). So the call counts the thread's handler runs, and one
 * seen before it parks again ends it with EINTR: its attempt had found
 * nothing, so nothing is lost. */
static uint32_t handler_runs(const cap__intr *in)
{
    cap__thread *self = cap__current();
    return in == NULL || self == NULL ? 0 : cap__sig_runs(self, in->restart);
}

ssize_t cap__io_do_wait(cap__io_ticket *tk, cap__io_attempt op, void *arg,
                        uint64_t *deadline_p, const cap__intr *in, size_t drain, bool skipped)
{
    cap__fd *f = tk->f;
    int fd = tk->fd, dir = tk->dir;
    if (file_nonblock_unseen(f, fd)) {
        cap__io_turn_tick(); /* io.h, turns: as a non-blocking call's */
        return -EAGAIN;
    }
    /* A timeout counted from here (io.h): one clock read, and the first
     * park need not read it again (the timeout is > 0). */
    bool fresh = *deadline_p == CAP__IO_TIMEO_LATER;
    if (fresh)
        *deadline_p = cap__io_deadline(f, dir);
    uint64_t deadline = *deadline_p;
    cap__io_call c;
    /* A call that takes signals sent to its thread (a signalfd read) is
     * registered for the whole call: a parked-only one is not registered
     * before the program's first handler, where such a send would not
     * find it (io/sigintr.h). */
    cap__io_call_begin(&c, in, in == NULL || in->takes == 0);
    uint32_t runs = handler_runs(in);
    ssize_t r;
    bool again = !skipped && urgent_mark_hides_data(f, fd, dir);
    for (bool first = true;; first = false) {
        int rc = ETIMEDOUT;
        if (!first && !again && handler_runs(in) != runs)
            rc = EINTR; /* a handler ran on the thread since the call began */
        else if (again)
            rc = 0;
        else if (deadline == CAP__FOREVER || fresh || cap__now() < deadline)
            rc = io_wait(tk, deadline, &c);
        fresh = false;
        if (rc == ETIMEDOUT && skipped) {
            /* Data whose event had not been harvested when the time ran
             * out: the call the kernel would have made finds it. */
            r = op(fd, arg);
            if (r == -EAGAIN)
                r = -ETIMEDOUT;
            break;
        }
        if (rc == ETIMEDOUT || rc == EBADF || rc == EINTR || rc == ECANCELED) {
            r = -rc;
            break;
        }
        if (rc == EPERM)
            block_in_poll(fd, dir, deadline);
        /* After a wake-up the attempt is always made (the event, or a
         * hand-off, says so). */
        cap__io_prepare(tk, f, fd, dir);
        skipped = false;
        r = cap__io_attempt_once(tk, op, arg, drain);
        if (r != -EAGAIN) {
            /* The check inline: nearly always nobody else waits. An error
             * is handed on too: most say something about the descriptor
             * that the next waiter's call meets as well (accept on a
             * listener shut down: EINVAL for every thread blocked in it,
             * as in the kernel, where only the first woken left before). */
            if (__atomic_load_n(&f->head[dir], __ATOMIC_RELAXED) != NULL)
                cap__io_handoff(f, fd, dir);
            break;
        }
        again = urgent_mark_hides_data(f, fd, dir);
    }
    /* Not counted (io.h, turns): it came after a first attempt said
     * EAGAIN, and its first wait parks (that wait does not look at the
     * clock). */
    cap__io_call_leave(&c);
    return r;
}

/* ---- poll(): observer waits ---------------------------------------------- */

static unsigned dirs_of(short events)
{
    unsigned d = 0;
    if (events & (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND | POLLRDHUP))
        d |= CAP__IO_RBIT;
    if (events & (POLLOUT | POLLWRNORM | POLLWRBAND))
        d |= CAP__IO_WBIT;
    return d != 0 ? d : CAP__IO_RBIT; /* events 0: still POLLHUP/POLLERR */
}

static bool unlock_group(void *arg)
{
    cap__spin_unlock(&((cap__io_group *)arg)->lock);
    return true;
}

enum { POLL_STACK_RECORDS = 16 };

/* Dispatch's interrupt of a poll group or a sleep (under the registry's
 * locks). */
static bool interrupt_group(void *arg)
{
    group_fire(arg, false, 0);
    return true;
}

int cap__io_poll(struct pollfd *fds, nfds_t n, uint64_t deadline, const cap__intr *in)
{
    cap__io_waiter stack_recs[POLL_STACK_RECORDS];
    cap__io_waiter *recs = stack_recs;
    uint32_t stack_seqs[POLL_STACK_RECORDS];
    uint32_t *seqs = stack_seqs;
    if (n > POLL_STACK_RECORDS / 2) {
        recs = malloc(2 * n * sizeof *recs);
        seqs = malloc(2 * n * sizeof *seqs);
        if (recs == NULL || seqs == NULL) {
            free(recs);
            free(seqs);
            return -ENOMEM;
        }
    }
    /* One group for the whole call: a signal's interrupt may fire it at
     * any time until cap__sig_leave (group_fire then sees parked false,
     * or the thread parked on it in a later round). */
    cap__io_group g = { .thread = cap__current() };
    cap__sig_waiter sw;
    bool entered = false;
    bool sigfds = false; /* a signalfd of ours among fds */
    uint32_t sends = 0;  /* with sigfds: the sends to the thread before its look */
    int result;
    for (;;) {
        /* Before the look at the signalfds: a send counted after it is
         * looked at again rather than slept through (below). */
        sends = atomic_load(&g.thread->sig_sends);
        /* Snapshot every watched sequence before looking at readiness. */
        for (nfds_t i = 0; i < n; i++) {
            cap__fd *f = fds[i].fd >= 0 ? cap__fd_get(fds[i].fd) : NULL;
            seqs[2 * i] = f ? atomic_load(&f->seq[0]) : 0;
            seqs[2 * i + 1] = f ? atomic_load(&f->seq[1]) : 0;
            if (f != NULL && cap__fd_has(f, CAP__FDF_SIGNALFD))
                sigfds = true;
        }
        long r = cap__sys6(SYS_poll, (long)fds, (long)n, 0, 0, 0, 0);
        /* Even with no timeout the kernel's poll fails with EINTR when a
         * handler runs on this kernel thread during it. That delivery is
         * numbered and interrupts the call dispatch chooses (sigintr.h),
         * perhaps another one: here it counts as nothing ready. */
        if (r == -EINTR)
            r = 0;
        /* The thread's own pending signals, which the kernel's signalfd
         * does not see (io/sigfd.h). */
        if (sigfds && r >= 0 && atomic_load(&g.thread->sig_pending) != 0)
            r += cap__sigfd_poll(fds, n, g.thread);
        if (r == 0 && entered && cap__sig_hit(&sw)) {
            result = -EINTR;
            break;
        }
        if (r != 0 || deadline == 0 || (deadline != CAP__FOREVER && cap__now() >= deadline)) {
            result = (int)r; /* >= 0, or -errno */
            break;
        }
        if (in != NULL && !entered) {
            /* A send to this thread of any signal it blocks wakes the
             * call to look again (cap__sig_direct), not just one of the
             * masks as they were: another thread may change a mask
             * meanwhile (signalfd(fd, mask)), and the look reads them
             * anew. */
            cap__intr watching = *in;
            watching.wakes = sigfds ? UINT64_MAX : 0;
            cap__sig_enter(&sw, &watching, interrupt_group, &g);
            entered = true;
        }
        cap__spin_lock(&g.lock);
        g.fired = false;
        g.parked = false;
        g.woke = 0;
        cap__spin_unlock(&g.lock);
        size_t nrec = 0;
        bool unpollable = false, ready = false, cancelled = false;
        for (nfds_t i = 0; i < n && !ready; i++) {
            int fd = fds[i].fd;
            cap__fd *f = fd >= 0 ? cap__fd_get(fd) : NULL;
            if (f == NULL)
                continue;
            unsigned dirs = dirs_of(fds[i].events);
            if (arm(f, fd, atomic_load(&f->gen)) != 0) {
                unpollable = true;
                continue;
            }
            cap__spin_lock(&f->lock);
            for (int d = 0; d < 2; d++) {
                if (!(dirs & (1u << d)))
                    continue;
                if (atomic_load(&f->seq[d]) != seqs[2 * i + d]) {
                    ready = true;
                    break;
                }
                cap__io_waiter *w = &recs[nrec++];
                *w = (cap__io_waiter){ .group = &g, .dir = d, .events = fds[i].events };
                w->fd = fd;
                link_obs(f, w);
            }
            if (cap__netio_active->interest != NULL && !ready)
                cap__netio_active->interest(f, fd);
            cap__spin_unlock(&f->lock);
        }
        uint64_t until = deadline;
        if (unpollable) { /* a descriptor no backend can watch: re-check often */
            uint64_t soon = cap__deadline_after(1000000);
            if (soon < until)
                until = soon;
        }
        cap__spin_lock(&g.lock);
        /* A send to the thread since the look above found the call not
         * registered yet, or fired the group before the reset: it is
         * counted (the sender counts it before it looks for the call). */
        bool own = entered && sigfds && atomic_load(&g.thread->sig_sends) != sends;
        if (!ready && !g.fired && !(entered && cap__sig_hit(&sw)) && !own) {
            g.parked = true;
            count_waits(1);
            cancelled = (in != NULL && in->cancel ? cap__park_cancellable : cap__park)(
                             CAP__PARK_IO_READ, fds, until, unlock_group, &g) == ECANCELED;
            count_waits(-1);
            cap__spin_lock(&g.lock);
            g.parked = false;
        }
        /* Resumed: the deliveries numbered until now are settled below. */
        uint64_t woke = g.woke != 0 ? cap__sig_count() : 0;
        cap__spin_unlock(&g.lock);
        for (size_t k = 0; k < nrec; k++) {
            cap__io_waiter *w = &recs[k];
            cap__fd *f = cap__fd_peek(w->fd);
            cap__spin_lock(&f->lock);
            if (w->linked)
                unlink_waiter(f, w);
            cap__spin_unlock(&f->lock);
        }
        if (cancelled) { /* nothing was reported: a poll has no side effect */
            result = -ECANCELED;
            break;
        }
        /* A delivery that came before any event (it fired the group, or
         * hit between two parks) or before the call resumed from the
         * event that fired it ends the call before it looks at readiness
         * again; one after that, readiness first (sigintr.h, "Ordering"). */
        if (entered) {
            if (woke != 0)
                cap__sig_settle(&sw, woke);
            if (cap__sig_hit_first(&sw, woke)) {
                result = -EINTR;
                break;
            }
        }
    }
    if (entered)
        cap__sig_leave(&sw);
    if (recs != stack_recs) {
        free(recs);
        free(seqs);
    }
    cap__io_turn_tick_of(g.thread); /* io.h, turns: a poll that finds data ready never parks */
    return result;
}

/* ---- sleeps, pause, sigsuspend ------------------------------------------- */

int cap__io_sleep(uint64_t deadline, const cap__intr *in)
{
    cap__cancel_point();
    cap__io_group g = { .thread = cap__current() };
    cap__sig_waiter sw;
    if (in != NULL)
        cap__sig_enter(&sw, in, interrupt_group, &g);
    int rc = 0;
    /* Only the timer, a signal or a cancel wakes it; the loop guards
     * against spurious wake-ups, so it never returns before the deadline. */
    while (deadline == CAP__FOREVER || cap__now() < deadline) {
        cap__spin_lock(&g.lock);
        if (in != NULL && cap__sig_hit(&sw)) {
            cap__spin_unlock(&g.lock);
            rc = EINTR;
            break;
        }
        g.fired = false;
        g.parked = true;
        /* Counted as an I/O wait: a signal may still end a sleep without
         * deadline (pause), so it is no deadlock. */
        count_waits(1);
        int r = cap__park_cancellable(CAP__PARK_SLEEP, &g, deadline, unlock_group, &g);
        count_waits(-1);
        cap__spin_lock(&g.lock);
        g.parked = false;
        cap__spin_unlock(&g.lock);
        if (r == ECANCELED) {
            if (in != NULL)
                cap__sig_leave(&sw);
            cap__cancel_act();
        }
    }
    if (in != NULL)
        cap__sig_leave(&sw);
    cap__io_turn_tick_of(g.thread); /* io.h, turns: a sleep of zero never parks */
    return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * The I/O layer's internal API, used by the libc-named wrappers in
 * src/intercept/ (and by tests through them). Everything here runs on a
 * user thread unless it says otherwise; errors are returned as -errno (or
 * a positive errno where noted), never through errno.
 *
 * Waiting on a descriptor is "try, then park": the caller snapshots the
 * descriptor's event sequence (cap__io_prepare), makes its non-blocking
 * call, and only on EAGAIN parks (cap__io_wait). An event that arrives
 * anywhere between the snapshot and the park changes the sequence, so the
 * park is refused and the caller simply tries again: with edge-triggered
 * backends no readiness can fall between the try and the wait.
 *
 * Layering: intercept -> io (this) -> sched (park/unpark, poller).
 */
#ifndef CAP_IO_IO_H
#define CAP_IO_IO_H

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "io/fd.h"
#include "io/netio.h"
#include "io/sigintr.h"
#include "io/wait.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"

/* Reads CAP_NETIO and CAP_DISKIO, starts the chosen backends and installs
 * the poller. Called once by the runtime's start-up, before the workers
 * start. Exits(2) with a message on an invalid or unavailable setting. */
void cap__io_start(void);
/* In a fork's child, right after the fork: the child's own backend
 * instances, no registrations or waiters of the parent's (start.c). */
void cap__io_forked(void);
/* The process is ending by exit(), after the program's destructors and
 * its streams' last writes (runtime/init.c): the backend lets go of
 * every file its waits hold (netio.h, at_exit). Any thread. */
void cap__io_at_exit(void);
/* The process is ending by _exit() or _Exit() (intercept/exit.c): the
 * backend lets go of the files its waits hold, as at a signal that ends
 * the process (no stream is written, nothing watched again). Nothing in
 * a process that shares this one's memory without being it (a raw
 * clone(CLONE_VM) or vfork child): its pid is not the runtime's. Any
 * thread, a signal handler too. */
void cap__io_exit_now(void);
/* Around an exec of this process (intercept/exec.c): the backend lets go
 * of the files of close-on-exec descriptors its waits hold, so that they
 * close with the exec (netio.h, exec_begin), and watches them again if
 * the exec failed. Nothing in a signal handler. */
void cap__io_exec_begin(void);
void cap__io_exec_failed(void);

/* ---- waiting on descriptors (io/wait.c) -------------------------------- */

typedef struct cap__io_ticket {
    cap__fd *f;
    int fd;
    int dir;       /* CAP__IO_READ or CAP__IO_WRITE */
    uint32_t gen;
    uint32_t seq;
} cap__io_ticket;

/* One blocking call that may wait several times on one descriptor; it
 * carries what lets a signal interrupt the call (sigintr.h). Lives on the
 * caller's stack from cap__io_call_begin to cap__io_call_end. */
typedef struct cap__io_call {
    const cap__intr *in;
    cap__fd *f;          /* the descriptor of its waits */
    cap__io_waiter w;    /* [f->lock] the record of the current wait */
    cap__sig_waiter sw;
    bool entered;        /* sw is linked (from the first wait on) */
    bool parked_only;    /* sw is linked only while the call parks
                            (sigintr.h, parked-only calls) */
    uint32_t sends;      /* in->wakes: its thread's sig_sends before its last
                            look; it parks only while that is current */
} cap__io_call;

/* in: what may interrupt the call (NULL: nothing; its waits are then not
 * interruptible, nor cancellable). The call registers for signals at its
 * first wait until the end; parked_only: only for each park, so signals
 * reach it only while it is parked (sigintr.h). */
void cap__io_call_begin(cap__io_call *c, const cap__intr *in, bool parked_only);
/* Leaves the signal registry if the call entered it: returns the signal
 * that interrupted the call, or 0. cap__io_call_end (below, with the
 * turns) is this and a count of the call. */
int cap__io_call_leave(cap__io_call *c);
/* The signal registry's interrupt of a call waiting on one descriptor
 * (io/wait.c); the one that can wake a call to go on waiting
 * (cap__sig_direct). */
bool cap__io_interrupt_excl(void *arg);

/* Snapshots f's event sequence for dir; call before the attempt. */
static inline void cap__io_prepare(cap__io_ticket *tk, cap__fd *f, int fd, int dir)
{
    tk->f = f;
    tk->fd = fd;
    tk->dir = dir;
    tk->gen = atomic_load(&f->gen);
    tk->seq = atomic_load(&f->seq[dir]);
}
/* Parks until an event newer than the snapshot, the absolute deadline,
 * close, or (with c) a signal that may interrupt the call c or, if
 * c->in->cancel, a cancel request. Returns 0 (try again), ETIMEDOUT,
 * EBADF (closed while waiting), EINTR, ECANCELED (the caller acts once it
 * holds nothing, src/sync/cancel.h) or EPERM (the backend cannot poll
 * this descriptor). c may be NULL. */
int cap__io_wait(cap__io_ticket *tk, uint64_t deadline, cap__io_call *c);
/* After a call that succeeded following a wake-up: if other threads wait
 * on the same direction and the descriptor is still ready, wake the next
 * one (one wake per connection for accept pools, and none lost). */
void cap__io_handoff(cap__fd *f, int fd, int dir);
/* Wakes every thread parked exclusively on a descriptor, result 0 (try
 * again): cap__sig_handler_coming's sweep (sigintr.h). */
void cap__io_rewake_exclusive(void);

/* A non-blocking attempt: >= 0 or -errno, never blocks. */
typedef ssize_t (*cap__io_attempt)(int fd, void *arg);

/* The drained-socket key of a snapshot (fd.h); never 0 but for the one
 * snapshot that wraps, which then just goes without the shortcut. */
static inline uint64_t cap__io_drained_key(const cap__io_ticket *tk)
{
    return ((uint64_t)tk->gen << 32 | tk->seq) + 1;
}

/* One attempt after tk's snapshot; with drain (cap__io_do), records what
 * it proved for the next call: a shorter result or EAGAIN left the socket
 * empty. */
__attribute__((always_inline)) static inline ssize_t
cap__io_attempt_once(const cap__io_ticket *tk, cap__io_attempt op, void *arg, size_t drain)
{
    ssize_t r = op(tk->fd, arg);
    if (drain != 0)
        atomic_store_explicit(&tk->f->drained,
                              r == -EAGAIN || (r > 0 && (size_t)r < drain)
                                  ? cap__io_drained_key(tk)
                                  : 0,
                              memory_order_relaxed);
    return r;
}

/* A TCP socket fresh from accept: its first blocking read parks without
 * the attempt, like a drained socket's (fd.h). Nothing has been harvested
 * for this life yet, so whatever the kernel queued before or after the
 * accept is reported by the registration that park makes (netio.h, arm)
 * or, if the socket was armed meanwhile, by an event not yet harvested:
 * either bumps seq[READ] and the read is made. In the paper's client
 * pattern most first reads come before the request and said EAGAIN; the
 * registration they skip to is made for the connection's later reads
 * anyway. Only with an edge backend (cap__io_do checks). */
static inline void cap__io_fresh_drained(cap__fd *f)
{
    if (cap__fd_has(f, CAP__FDF_REGISTERED))
        return; /* another thread already waited on it: no claim to make */
    cap__io_ticket tk;
    cap__io_prepare(&tk, f, -1, CAP__IO_READ);
    atomic_store_explicit(&f->drained, cap__io_drained_key(&tk), memory_order_relaxed);
}

/* The rest of cap__io_do once its first attempt said EAGAIN (or was
 * skipped: skipped), out of line: park, try again, until done. tk is the
 * first attempt's snapshot. */
ssize_t cap__io_do_wait(cap__io_ticket *tk, cap__io_attempt op, void *arg,
                        uint64_t *deadline, const cap__intr *in, size_t drain, bool skipped);

/* A deadline not computed yet: the descriptor's SO_RCVTIMEO/SO_SNDTIMEO
 * for the call's direction, counted from the call's first park
 * (cap__io_do_at), where it becomes absolute. The kernel counts it from
 * the call; the first attempt before the park makes it a little late,
 * never early, which POSIX allows. A call that does not wait never reads
 * the clock. Not a real deadline (CAP__FOREVER - 1 ns is never reached). */
#define CAP__IO_TIMEO_LATER (CAP__FOREVER - 1)

/* Turns. A call that returns without parking is no scheduling point by
 * itself, so a thread whose descriptor always has data (a pipe that holds
 * a burst, a client that pipelines) would keep its worker's other threads
 * from running for as long as the data lasts, and one that polls in a
 * loop whose polls find data ready (data that another thread of its
 * worker is to consume) would hold that thread back for good: under NPTL
 * the kernel would have preempted it (CPython's fork multiprocessing.Pool
 * hung so in its first map). A thread that has made CAP__IO_TURN_MAX such
 * calls since it last parked yields (to the back of its worker's queue;
 * alone, it goes on at once), and while some I/O could complete that
 * yield passes through the scheduler's round, which polls
 * (cap__yield_polling): a thread parked on a descriptor that became
 * ready meanwhile waits a turn or two of such a neighbour (67-127 calls
 * in tests/io/ready_socket_seen_beside_busy_transfers, which allows
 * 256), not the worker's periodic poll (every 61st switch: ~3,900).
 *
 * The count is the thread's (io_turns in its TCB, thread/thread.h): one
 * increment and compare a call, on a line its parks write anyway. Every
 * park sets it to 0 (sched/park.c), and so does the yield here; a yield
 * of the program's own does not (the yield path is the one the switch
 * benchmarks time; such a thread may then yield once more than it had
 * to, never less). A thread that parks on every request
 * (a server waiting for its next one) never reaches the bound. What
 * counts, each where the I/O layer's call path returns:
 *  - a transfer that returns after its first attempt (cap__io_do_at:
 *    any result of a non-blocking call, EAGAIN too, since a loop of them
 *    waits for data as a poll loop does; any but EAGAIN of a blocking
 *    one, which then parks), and a complete transfer of rw.c's direct
 *    path for blocking sockets;
 *  - a poll, ppoll, select or pselect (cap__io_poll), a sleep
 *    (cap__io_sleep: one of zero never parks), and a call that waits
 *    through cap__io_call_begin/end (epoll_wait, a connect, a signalfd
 *    read), parked or not: a park has just set the count to 0.
 * These are places where the call could have parked anyway, so no
 * runtime lock is held there, and none is reached from a signal handler
 * (the wrappers make the kernel's call there, intercept.h), so the yield
 * is safe wherever the count runs out. Disk transfers have their own
 * rule (disk.c).
 *
 * Pipetest showed why for transfers (bench/io): its tokens gather in one
 * pipe, and the thread reading it passed the whole burst on without a
 * switch, then the
 * next thread did, so the burst moved through the ring one thread at a
 * time, and on two workers only one worked (bimodal: ~2.0M tokens/s in
 * a third to half of the runs at 1,024 pipes, 2.5-2.9M in the rest).
 * With turns the burst spreads and both work: 2.7-3.3M in each of 13
 * direct runs (epoll), 2.6-3.1M in bench/io's medians against 2.0-2.2M
 * for the old library in the same run. The price is on one worker, where
 * a burst passed on whole costs a switch per thread it crosses, not per
 * token: 3-8% fewer tokens/s at 256-8,192 pipes with 64; with 16, 7-22%
 * (and 5-9% fewer on two workers at 4,096-8,192); with 128 and 256 the
 * gain on two workers shrank (2.7-3.1M, 2.3-2.8M). Same-run comparisons,
 * 5 runs each, status.md (session 13). (The count was then the kernel
 * thread's, started again by any switch of its worker, so by a park or
 * any yield of the running thread: the same but for the program's
 * yields.) The readiness calls share the bound. Cost (callgrind, one
 * worker, 100,000 calls): a poll that finds a pipe ready 241 -> 248
 * instructions, an epoll_wait 199 -> 205 (each with its share of the
 * yields, ~0.7), a round trip of two threads over two pipes (two parked
 * reads) 3,036 -> 3,042. */
enum { CAP__IO_TURN_MAX = 64 };
/* Yields the calling user thread, if it is one, polling for I/O first
 * (above), and starts its count again. */
void cap__io_turn_end(void) __attribute__((visibility("hidden")));
/* The same without the poll, for disk.c's rule for page-cache hits: it
 * yields every 16 hits, where a poll would cost a few percent of cached
 * reads while other reads are in flight. */
void cap__io_hits_turn_end(void) __attribute__((visibility("hidden")));

/* Counts one call of self, the running user thread, that may not have
 * parked. */
__attribute__((always_inline)) static inline void cap__io_turn_tick_of(cap__thread *self)
{
    if (__builtin_expect(++self->io_turns >= CAP__IO_TURN_MAX, 0))
        cap__io_turn_end();
}

/* cap__io_turn_tick_of for the calling thread; user threads only. */
__attribute__((always_inline)) static inline void cap__io_turn_tick(void)
{
    cap__io_turn_tick_of(cap__current());
}

/* Ends the call c: returns the signal that interrupted it, or 0, and
 * counts it (an epoll_wait that found events did not park). Inline, so
 * that the count costs no call of its own. */
__attribute__((always_inline)) static inline int cap__io_call_end(cap__io_call *c)
{
    int sig = c->entered ? cap__io_call_leave(c) : 0;
    cap__io_turn_tick();
    return sig;
}

/* Runs attempt until it returns anything but -EAGAIN, parking in between;
 * nonblock: a single attempt. *deadline: absolute, CAP__FOREVER, or
 * CAP__IO_TIMEO_LATER, which the first park replaces with the absolute
 * one (so that a caller making several calls of one transfer keeps one
 * deadline). Returns the attempt's result, -ETIMEDOUT at
 * the deadline, -EBADF if closed meanwhile, -EINTR if a signal allowed by
 * in (NULL: none) interrupted the wait, -ECANCELED if in->cancel and a
 * cancel request ended it (the caller acts, after releasing what it holds).
 * drain: for a read that consumes what it gets (no MSG_PEEK, MSG_OOB or
 * MSG_ERRQUEUE), the bytes it asks for, else 0; on a CAP__FDF_DRAINS
 * socket a shorter result marks the socket drained, and a later call
 * finding it still so parks without the attempt (fd.h).
 *
 * Inline, so that a caller passing its own attempt function gets it
 * inlined into the first try, which is all a call that does not wait
 * runs; the waits are cap__io_do_wait's. */
__attribute__((always_inline)) static inline ssize_t
cap__io_do_at(cap__fd *f, int fd, int dir, cap__io_attempt op, void *arg, uint64_t *deadline,
              bool nonblock, const cap__intr *in, size_t drain)
{
    if (nonblock) {
        ssize_t r = op(fd, arg);
        cap__io_turn_tick(); /* EAGAIN too: a loop of them waits for another thread */
        return r;
    }
    if (!cap__netio_active->edge || !cap__fd_has(f, CAP__FDF_DRAINS))
        drain = 0;
    cap__io_ticket tk;
    cap__io_prepare(&tk, f, fd, dir);
    /* A drained socket parks without the attempt: while (gen, seq[READ])
     * still equals the snapshot of the read that emptied it, an attempt
     * could only say EAGAIN (fd.h). A descriptor not registered yet is
     * registered by that park, after the snapshot, and the registration
     * reports what is there already (every edge backend: netio.h), which
     * then bumps seq: nothing that came after the read that emptied it is
     * missed. */
    uint32_t fl = atomic_load_explicit(&f->flags, memory_order_relaxed);
    bool skipped = drain != 0 &&
                   atomic_load_explicit(&f->drained, memory_order_relaxed) ==
                       cap__io_drained_key(&tk) &&
                   !(fl & CAP__FDF_NODRAIN);
    if (!skipped) {
        ssize_t r = cap__io_attempt_once(&tk, op, arg, drain);
        if (r != -EAGAIN) {
            cap__io_turn_tick();
            return r;
        }
    }
    return cap__io_do_wait(&tk, op, arg, deadline, in, drain, skipped);
}

/* cap__io_do_at with a deadline of its own (absolute, CAP__FOREVER or
 * CAP__IO_TIMEO_LATER). */
__attribute__((always_inline)) static inline ssize_t
cap__io_do(cap__fd *f, int fd, int dir, cap__io_attempt op, void *arg, uint64_t deadline,
           bool nonblock, const cap__intr *in, size_t drain)
{
    return cap__io_do_at(f, fd, dir, op, arg, &deadline, nonblock, in, drain);
}

/* poll(2) for a user thread: same arguments and result, parks instead of
 * blocking; deadline absolute (CAP__FOREVER: none, 0: do not wait). On
 * error returns -errno; -EINTR if a signal allowed by in (NULL: none)
 * interrupted it while nothing was ready; -ECANCELED as cap__io_do. */
int cap__io_poll(struct pollfd *fds, nfds_t n, uint64_t deadline, const cap__intr *in);
/* Makes the backend stop watching fd's current life for good (its waits
 * then poll for it, as for a descriptor the backend refused) and wakes
 * its waiters to find that out; false if it was not watched. For a
 * registration that gets in the program's way (an epoll set's nesting). */
bool cap__io_unwatch(int fd);
/* The backend stopped watching the program's descriptors
 * (cap__io_at_exit): each registered one (not the runtime's own,
 * CAP__FDF_INTERNAL) becomes unpollable and its waiters try again,
 * waiting the unwatched way (poll(2) on their worker). A descriptor
 * whose lock stays taken is left as it is. */
void cap__io_unwatch_all(void);

/* Parks until the absolute deadline (CAP__FOREVER: until a signal) or a
 * signal allowed by in (NULL: none). A cancellation point. 0 at the
 * deadline, EINTR. */
int cap__io_sleep(uint64_t deadline, const cap__intr *in);

/* Absolute deadline for a blocking call in dir, from SO_RCVTIMEO /
 * SO_SNDTIMEO. */
static inline uint64_t cap__io_deadline(const cap__fd *f, int dir)
{
    if (!(atomic_load_explicit(&((cap__fd *)f)->flags, memory_order_relaxed) & CAP__FDF_TIMEO))
        return CAP__FOREVER;
    uint64_t t = atomic_load_explicit(&((cap__fd *)f)->timeo[dir], memory_order_relaxed);
    return t == 0 ? CAP__FOREVER : cap__deadline_after(t);
}

/* cap__io_deadline without the clock read: CAP__IO_TIMEO_LATER if the
 * descriptor has a timeout in dir, else CAP__FOREVER. */
static inline uint64_t cap__io_deadline_later(const cap__fd *f, int dir)
{
    if (!(atomic_load_explicit(&((cap__fd *)f)->flags, memory_order_relaxed) & CAP__FDF_TIMEO))
        return CAP__FOREVER;
    uint64_t t = atomic_load_explicit(&((cap__fd *)f)->timeo[dir], memory_order_relaxed);
    return t == 0 ? CAP__FOREVER : CAP__IO_TIMEO_LATER;
}

/* Registers one of the runtime's own descriptors (a ring's eventfd): cb
 * runs on whichever worker harvests its readiness. 0 or -errno. */
int cap__io_watch(int fd, void (*cb)(void *arg), void *arg);

/* True while some I/O could still wake a thread (deadlock detector). */
bool cap__io_pending(void);
bool cap__io_fd_pending(void);
/* Operations in flight outside the descriptor waiters (disk, offload). */
extern __attribute__((visibility("hidden"))) atomic_long cap__io_inflight;

/* ---- disk (io/disk_*.c) ------------------------------------------------ */

enum cap__disk_op { CAP__DISK_READ, CAP__DISK_WRITE };

/* readv/writev at off (-1: the file position, updated) on a regular file,
 * only the caller waiting. Full-length semantics as a blocking call has.
 * >= 0 or -errno. */
ssize_t cap__disk_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                     off_t off, int rwf);
/* Before a transfer the kernel makes out of regular file fd (sendfile,
 * splice) of up to *len bytes from off (-1: the file position): if a page
 * of the range it looks at is not cached, reads that range through the
 * backend (only the caller waits), so the transfer finds it cached.
 * Lowers *len to the range looked at or read (io/disk_warm.c). */
void cap__disk_warm(int fd, off_t off, size_t *len);
/* The fast path of pread(): cap__disk_pread_hot in io/disk_hot.h. */
/* fsync or fdatasync. 0 or -errno. */
int cap__disk_fsync(int fd, bool datasync);

/* ---- offload (io/offload.c) --------------------------------------------- */

/* Runs fn(arg) on a kernel thread of the offload pool while only the
 * calling user thread waits; from any other thread, runs it inline.
 * 0, or -EAGAIN if no pool thread could be started. */
int cap__offload(void (*fn)(void *arg), void *arg);
/* cap__offload for a call that may wait without bound for another party
 * (a child, a pipe's other end) but cannot be interrupted: not held to
 * the pool's bound for work, as cap__offload_call's waits. */
int cap__offload_wait(void (*fn)(void *arg), void *arg);
/* A blocking call that may wait without bound, run on the offload pool:
 * fn(arg) makes the call and stores its result (>= 0 or -errno) in
 * *result. The wait ends early as in allows: a cancel request (in->cancel)
 * or a signal chosen to interrupt it (io/sigintr.h) interrupts the call
 * in the pool thread, which then does not retry it; the result is then
 * -ECANCELED or -EINTR, unless the call completed anyway. A call
 * interrupted while its waiter still waits (a stray SIGURG) is retried.
 * Returns
 * *result. From any other thread, or when no pool thread can be started,
 * runs fn inline. */
long cap__offload_call(void (*fn)(void *arg), void *arg, long *result, const cap__intr *in);
/* cap__offload_call for a call with a timeout of its own that ends at the
 * absolute CLOCK_MONOTONIC deadline: if it is still queued for a pool
 * thread then, it leaves the queue, and expired(arg), on the caller's
 * thread, makes the call once without waiting (the kernel tries a timed
 * call before it looks at its timeout) and stores its result in *result
 * (-EAGAIN, -ETIMEDOUT, ... if it would wait), which is returned. fn
 * should pass the call what is left of its timeout when it starts late;
 * then fn itself, past the deadline, is such a call. */
long cap__offload_call_until(void (*fn)(void *arg), void *arg, long *result,
                             const cap__intr *in, uint64_t deadline,
                             void (*expired)(void *arg));
/* Its interrupt for the signal registry: one of the waits a signal sent
 * to the thread can wake to go on (cap__sig_direct; the call then runs
 * the handler while its job goes on in the pool). */
bool cap__offload_interrupt(void *arg);
/* True while jobs of user threads are queued or running in the pool. */
bool cap__offload_busy(void);
/* In a fork's child: an empty pool with no threads (the parent's are not
 * in the child); jobs in flight were the parent's threads'. */
void cap__offload_forked(void);
/* Called by a job's fn: on a pool thread, takes sig if it is pending
 * there (every signal is blocked on pool threads, so one the kernel
 * raised on the thread for the job's call, SIGPIPE for a write to a pipe
 * whose reader is gone, waits there for good) and says true, so that the
 * caller raises it in its user thread, as the call made there would have.
 * False elsewhere. */
bool cap__offload_took(int sig);
/* Kernel threads the offload pool has started (deadlock report). */
int cap__offload_threads(void);

#endif /* CAP_IO_IO_H */

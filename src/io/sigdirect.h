/* SPDX-License-Identifier: MIT */
/*
 * Signals directed at one user thread: pthread_kill (cap_thread_kill),
 * raise, and pthread_sigqueue (cap_thread_sigqueue), whose siginfo is
 * kept beside the set, in a route slot handed to the thread, for the
 * delivery or take there to claim (io/sigroute.h).
 *
 * POSIX gives each thread a set of pending signals of its own, and a
 * signal sent to a thread is delivered to that thread: its handler runs
 * in the thread's context, and a blocking call of the thread fails with
 * EINTR (or goes on, for a read-like call under SA_RESTART). The kernel
 * knows only kernel threads, and the one a user thread runs on changes,
 * so the runtime keeps the set in the TCB (cap__thread.sig_pending, bit
 * sig - 1) and the thread delivers its own pending signals, on its own
 * kernel thread while it is the current thread there: the signal is sent
 * to that kernel thread (tgkill) with it unblocked for a moment, so the
 * kernel runs the program's handler, or the default action, as for any
 * signal (cap__sigmask_raise_here, io/sigmask.h). A signal the thread
 * blocks stays in its set until its mask lets it through, and sigwait,
 * sigwaitinfo and sigtimedwait take it from there (intercept/sigwait.c);
 * sigpending reports it.
 *
 * Where a thread delivers (its "safe points", each holding no lock of
 * the runtime): as it resumes from a park outside a call registered for
 * signals (sched/park.c: a disk read, an offloaded call), or from a
 * yield; in a mutex, condition variable, once, barrier or join wait once
 * it has unlinked itself (sched/park.h); and
 * at its start; as a call that signals may interrupt registers and leaves
 * (io/sigintr.c); after it changes its own mask (intercept/sigmask.c);
 * and in the kick handler when the kick interrupted it running
 * (src/stack/signal.c). Inside a registered call the call's records are
 * linked (on its stack): a handler there that jumps out (siglongjmp, the
 * classic way to abandon a blocking call) has its jump handed to the
 * thread itself, as src/stack/signal.c hands a jump into a parked thread,
 * and the call ends with EINTR and makes the jump as it returns. As it
 * resumes from another wait (a mutex, a join, a disk read: records of
 * their own), a jump out of the handler is refused with a message.
 *
 * The sender (cap__sig_send) records the signal, then brings the thread
 * to a safe point, and repeats until one of these holds:
 *  - the signal is gone from the set (delivered or taken);
 *  - the thread waits in a call the signal may interrupt: that call is
 *    woken with EINTR (io/sigintr.c, cap__sig_direct), or, for a
 *    read-like call, a semaphore wait or an offloaded call and a
 *    SA_RESTART handler, woken to go on waiting, so it delivers and parks
 *    again; a call that blocks the signal (its mask, ppoll's or
 *    sigsuspend's) keeps it for the call's end;
 *  - the thread is parked in a wait whose token is signallable (a
 *    mutex, condition variable, once, barrier or join wait): the sender
 *    claims it (sched/park.h), and the thread unlinks itself, delivers
 *    and waits again;
 *  - the thread is runnable, or parked where no signal interrupts (a
 *    disk read): it delivers as it resumes;
 *  - the thread runs on another worker: that worker is kicked
 *    (CAP__SIG_KICK), and the kick handler delivers if it interrupted
 *    that thread; the sender tries again until it did, or the thread
 *    reached one of the cases above;
 *  - the thread runs a handler there (whose sa_mask may hold the signal,
 *    and which may run for long): if it is outside a registered call, the
 *    end of the outermost handler delivers (the worker's `handlers`
 *    depth, set before the handler and cleared before that end looks at
 *    the set: a Dekker pair with the sender's record and look); if the
 *    handler runs in the thread's own delivery loop in a call or a wait
 *    (sig_delivering), that loop delivers. A handler that jumps out
 *    instead leaves it for the thread's next safe point. A handler run
 *    inside a registered call between two of its parks (a process-wide
 *    signal) is waited for, as the kick is.
 * The record and the thread's registration are ordered under the
 * registry's shard locks (sigintr.h), so a thread that registers a call
 * just as the signal is sent either is found there by the sender or finds
 * the signal as it registers. A signal whose disposition is the default
 * action (not ignore) and that the thread does not block is raised at
 * once on the sender's kernel thread: it ends (or stops) the whole
 * process wherever it is delivered. One that is ignored and not blocked
 * is dropped, as the kernel drops it.
 *
 * A send from inside a handler (pthread_kill is async-signal-safe) takes
 * no lock: one aimed at the thread the handler interrupted is delivered
 * at once, nested; others are recorded and brought by the signal
 * dispatch that follows the handler (cap__sig_run_deferred_sends).
 *
 * Limits (docs/pthread-compat.md): one pending instance per standard
 * signal (as in the kernel), up to 255 per real-time signal (EAGAIN
 * beyond); a thread in a disk read runs its handler only when the read
 * ends (as the kernel does); at most 64 sends from handlers wait for
 * their dispatch (EAGAIN beyond).
 */
#ifndef CAP_IO_SIGDIRECT_H
#define CAP_IO_SIGDIRECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "thread/thread.h"
#include "util/sigctx.h"

/* Delivers the pending signals self's mask lets through, on its kernel
 * thread (self is the running thread; not in a handler). Returns the last
 * one delivered that interrupts a blocking call: one whose handler lacks
 * SA_RESTART, or with restartable false any with a handler; 0 if none.
 * mode (enum cap__own_delivery, util/sigctx.h): CAP__OWN_IN_CALL, self
 * is inside a call registered for signals (io/sigintr.h), whose records a
 * jump out of a handler would abandon: such a jump is handed to self
 * instead (src/stack/signal.c) and made as the call returns, and the
 * signal then counts as interrupting. */
int cap__sig_deliver_pending(cap__thread *self, bool restartable, int mode);

/* At a safe point of self: delivers its pending signals, if any, with
 * mode saying what a handler's jump may do (util/sigctx.h): CAP__OWN_FREE
 * outside the runtime's waits, CAP__OWN_IN_CALL inside a registered call
 * (cap__sig_leave), CAP__OWN_NO_JUMP as it resumes from another wait
 * (sched/park.c). One load when nothing is pending. */
static inline void cap__sig_pending_check(cap__thread *self, int mode)
{
    if (__builtin_expect(atomic_load_explicit(&self->sig_pending, memory_order_relaxed) != 0, 0))
        cap__sig_deliver_pending(self, false, mode);
}

/* How many handlers of signals sent to self alone self has run (thread.h,
 * sig_runs): for a call that SA_RESTART restarts (restart), only those
 * without SA_RESTART; for any other, all. A wait that parked outside the
 * signal registry (a parked-only transfer between its parks, io/wait.c;
 * a semaphore wait before the program's first handler, sync/sem.c) ends
 * with EINTR when this moved since it began: the handler ran inside it. */
static inline uint32_t cap__sig_runs(cap__thread *self, bool restart)
{
    return restart ? atomic_load_explicit(&self->sig_runs_intr, memory_order_relaxed)
                   : atomic_load_explicit(&self->sig_runs, memory_order_relaxed);
}

/* No real-time signal instances counted for t (a new thread, a fork's
 * child: its sig_pending cleared with it). */
void cap__sig_queued_clear(cap__thread *t);

/* For sigwait: takes one signal of set (bits) out of self's pending set;
 * returns it, or 0. */
int cap__sig_take_pending(cap__thread *self, uint64_t set);

/* Takes one instance of sig out of t's pending set, undelivered (a
 * routed signal going back to the process, io/sigroute.h); false if none
 * was pending. */
bool cap__sig_take_one(cap__thread *t, int sig);

/* Before an exec by self, whose own mask its kernel thread has now
 * (intercept/exec.c): sends that kernel thread a tgkill of each signal
 * pending for self alone that the mask holds, once per instance, so that
 * the kernel keeps them pending into the new program, as it keeps a
 * thread's own. The siginfo the new program sees is a tgkill's (a
 * pthread_sigqueue value is not carried). carried[sig - 1]: the copies sent
 * of sig. Self's own set is left as it is. */
enum { CAP__SIG_MAX = 64 }; /* signals 1 to 64 */
void cap__sig_exec_carry(cap__thread *self, uint8_t carried[CAP__SIG_MAX]);

/* The exec failed: takes the copies back out of this kernel thread's
 * pending signals (its own come first there, before the process's). */
void cap__sig_exec_take_back(const uint8_t carried[CAP__SIG_MAX]);

/* Records sig in the running thread self's pending set, as a send of
 * self's would, and leaves the delivery to self's next safe point (a
 * default action that ends the process is taken at once). */
void cap__sig_post_own(cap__thread *self, int sig);

/* The kick handler, on a worker's kernel thread, when the kick interrupted
 * a user thread (not a handler: uctx's mask has no handler mark,
 * io/sigmask.h), and the end of the outermost program
 * handler that interrupted one (src/stack/signal.c): if that thread has
 * pending signals its mask lets through and is not inside a call
 * registered for signals (which delivers as it leaves), sends them to
 * this kernel thread and lets them through uctx's mask, so they are
 * delivered as the handler returns, in the interrupted thread. */
void cap__sig_pending_kicked(void *uctx);

/* The sends made inside handlers (pthread_kill is async-signal-safe):
 * recorded there and brought to their threads here, by the signal
 * dispatch that follows the handler (io/sigintr.c). */
void cap__sig_run_deferred_sends(void);

#endif /* CAP_IO_SIGDIRECT_H */

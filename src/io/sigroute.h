/* SPDX-License-Identifier: MIT */
/*
 * Process-directed signals that reached a user thread blocking them, or
 * no thread at all.
 *
 * The workers' kernel threads block only what every user thread blocks
 * (io/sigmask.h), so the kernel may deliver a process-directed signal to
 * a worker whose running thread blocks it: libuv's threads block every
 * signal around a lock its handler takes, and a handler run there would
 * wait for that lock for good. POSIX delivers such a signal to a thread
 * that does not block it. Or the worker runs no thread (its scheduler:
 * every thread there is parked), and a handler run there would find no
 * thread (pthread_self() no thread's). So the trampoline
 * (src/stack/signal.c) runs no handler in either place (but for a
 * child's SIGCHLD from the kernel in the scheduler: its dispatch skips
 * calls begun after a wait returned that child, io/sigchld.h, which a
 * kept signal could not): it keeps the signal, with its siginfo, in a route slot
 * (cap__sig_route_away) and brings the signal dispatch, which picks a
 * thread that accepts it (cap__sig_run_routes) and sends it to that
 * thread as pthread_kill does (io/sigdirect.h), so the handler runs in
 * that thread and its blocking call, if any, is interrupted as for a
 * signal sent to it. The choice (io/sigintr.c, cap__sig_route_pick):
 * the call the dispatch would interrupt for it (main's, else the longest
 * waiter), else a sigwait of it, else a call it would interrupt were the
 * handler without SA_RESTART, else main, else any live thread that
 * accepts it.
 *
 * The delivery there is a tgkill, which carries no sender: the handler
 * gets the signal's own siginfo back from the slot (cap__sig_route_claim,
 * by the trampoline, and by sigwaitinfo and signalfd reads that take the
 * signal from the thread's set).
 *
 * Slots: free, filling (the trampoline writes it), ready (waiting for a
 * taker), picking (a dispatch chose it), handed (pending for thread h,
 * waiting for its claim). A standard signal handed to a thread that has
 * it pending already merges with it (one instance, as in the kernel): the
 * delivery claims every handed slot of it. A ready slot no thread accepts
 * (every thread blocked it after the kernel chose the worker) stays
 * ready: sigpending reports it, sigwait takes it, and a thread whose
 * mask change unblocks it (io/sigmask.c, cap__sigmask_set: its
 * pthread_sigmask, a masked call's entry or end) takes it, before
 * pthread_sigmask returns. A signal handed to a thread that blocks it
 * (but in a sigwait of it) or ends before taking it goes back to ready
 * (taken out of its set: cap__sig_routes_blocked, _closing, or by the
 * dispatch that handed it, whichever sees the other first).
 *
 * The same slots carry the siginfo of a signal sent to one thread with a
 * value (pthread_sigqueue, cap_thread_sigqueue: io/sigdirect.c), handed
 * to that thread by its sender and claimed by the signal's delivery or
 * take there as a routed one is; such a slot is the thread's own: it
 * never goes back to the process, and is dropped when the thread ends.
 * A delivery claims the oldest slot of its signal handed to the thread
 * (FIFO, as the kernel queues sigqueue's values).
 *
 * Limits (docs/pthread-compat.md): ROUTE_SLOTS (256) signals routed or
 * sent with a value and not yet delivered; beyond, or for a handler with SA_RESETHAND (whose
 * kernel disposition is the default once the kernel chose the worker),
 * the handler runs where the kernel delivered it, as before. A standard
 * signal sent to a thread with pthread_kill while a routed one is
 * pending there merges with it. A signalfd read does not see a kept
 * signal no thread accepts (sigwait does).
 */
#ifndef CAP_IO_SIGROUTE_H
#define CAP_IO_SIGROUTE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "thread/thread.h"

/* Slots handed to a thread and not yet claimed: 0 in a program whose
 * signals never reached a thread that blocked them. */
extern __attribute__((visibility("hidden"))) _Atomic int cap__sig_routes_handed;

/* In the trampoline, before a process-directed signal's handler would run
 * on a worker whose running thread blocks sig: keeps it for the dispatch
 * and brings that (async-signal-safe). False if no slot was free: the
 * handler runs here. */
bool cap__sig_route_away(int sig, const siginfo_t *info);

/* Slots not free: 0 (one load) in a program whose signals never
 * reached a thread that blocked them, or not lately. */
extern __attribute__((visibility("hidden"))) _Atomic int cap__sig_routes_used;

/* Signals in ready slots (the process's pending routed signals). */
uint64_t cap__sig_routes_ready_slow(void);
static inline uint64_t cap__sig_routes_ready(void)
{
    if (__builtin_expect(atomic_load_explicit(&cap__sig_routes_used, memory_order_relaxed) == 0,
                         1))
        return 0;
    return cap__sig_routes_ready_slow();
}

/* The dispatch (io/sigintr.c, ordinary context): sends each ready
 * signal to a thread that accepts it; gives back handed slots whose
 * thread ended. */
void cap__sig_run_routes_slow(void);
static inline void cap__sig_run_routes(void)
{
    if (atomic_load_explicit(&cap__sig_routes_used, memory_order_relaxed) != 0)
        cap__sig_run_routes_slow();
}

/* sig is being delivered to, or taken by, self as a signal sent to it: if
 * a route handed it to self, fills *info (may be NULL) with its siginfo,
 * frees the slot (every handed slot of sig, for a standard signal) and
 * returns true. Async-signal-safe. One load when no slot is handed. */
bool cap__sig_route_claim_slow(cap__thread *self, int sig, siginfo_t *info);
static inline bool cap__sig_route_claim(cap__thread *self, int sig, siginfo_t *info)
{
    if (__builtin_expect(atomic_load_explicit(&cap__sig_routes_handed, memory_order_relaxed) == 0,
                         1))
        return false;
    return cap__sig_route_claim_slow(self, sig, info);
}

/* The running user thread self no longer blocks the signals of
 * `unblocked`: the ready ones among them become pending for self (its
 * caller delivers them, io/sigdirect.h), so a pending process signal it
 * unblocks is delivered before pthread_sigmask returns. */
void cap__sig_routes_unblocked(cap__thread *self, uint64_t unblocked);

/* Before the running thread's mask change lets the signals of
 * `unblocked` through, with every signal blocked on its kernel thread:
 * a standard signal kept ready here that the kernel also holds pending
 * (sent again while every thread blocked it) is one instance, as in the
 * kernel, so the kernel's is taken and dropped; the kept one, with the
 * first sender's siginfo, is delivered (cap__sig_routes_unblocked). */
void cap__sig_routes_merge_kernel(uint64_t unblocked);

/* The running user thread self now blocks the signals of `blocked` (or
 * ends: _closing, all of them, called once self->sig_closed is set and
 * a barrier passed): process signals handed to it and still pending in
 * its set go back to the process, for another thread. */
void cap__sig_routes_blocked(cap__thread *self, uint64_t blocked);
static inline void cap__sig_routes_closing(cap__thread *self)
{
    if (__builtin_expect(atomic_load_explicit(&cap__sig_routes_handed, memory_order_relaxed) != 0,
                         0))
        cap__sig_routes_blocked(self, ~UINT64_C(0));
}

/* sigwait and sigtimedwait of set on a user thread: takes one ready
 * signal of set, filling *info (may be NULL); returns it, or 0. */
int cap__sig_route_take(uint64_t set, siginfo_t *info);

/* A slot of cap__sig_route_direct. */
struct cap__sig_slot {
    int index;
    uint64_t word;
};

/* pthread_sigqueue's sender (io/sigdirect.c): takes a free slot for sig
 * and its siginfo, not yet visible to claims; false if none was free.
 * Then either _release (sig not sent) or, once sig is counted for t and
 * before it shows in t's set, _hand, so that a delivery that follows the
 * record finds the slot. All async-signal-safe. */
bool cap__sig_route_reserve(int sig, const siginfo_t *info, struct cap__sig_slot *slot);
void cap__sig_route_release(struct cap__sig_slot *slot);
void cap__sig_route_hand(struct cap__sig_slot *slot, cap__thread *t, cap_thread_t h);

/* Frees a handed slot again, unless a claim took it: sig was not left
 * pending for t (ignored, taken back, merged with an instance pending
 * already, or t is ending). A second call does nothing. */
void cap__sig_route_undirect(const struct cap__sig_slot *slot);

/* In a fork's child: the parent's routed signals were the parent's. */
void cap__sig_routes_forked(void);

#endif /* CAP_IO_SIGROUTE_H */

/* SPDX-License-Identifier: MIT */
/*
 * Signals interrupting parked calls: how a blocking call of a user thread
 * returns EINTR when a caught signal arrives (signal(7), "Interruption of
 * system calls and library functions by signal handlers").
 *
 * In M:N the handler runs on whatever kernel thread the kernel picked
 * (a worker, an offload thread), while the user thread that should see
 * EINTR is parked. So a signal is handled in two halves:
 *
 *  1. Handler side, async-signal-safe: cap__sig_caught(sig, sa_flags),
 *     called by the handler trampoline (src/stack/signal.c) after the
 *     program's handler returned. It numbers the delivery (one atomic
 *     fetch-add), records (sig, SA_RESTART) in a ring slot and writes the
 *     runtime's eventfd. No lock, no allocation, errno preserved.
 *  2. Dispatch, on a worker in ordinary context: the eventfd is one of the
 *     runtime's watched descriptors (cap__io_watch), so the worker that
 *     harvests it reads the ring and, for each delivery, interrupts at
 *     most one parked call, chosen as follows.
 *
 * Which thread a process-directed signal interrupts. POSIX delivers it to
 * exactly one thread that does not block it; user threads have no masks
 * of their own, so every user thread qualifies, and we pick one that the
 * delivery can actually interrupt:
 *  - a call is eligible if it was waiting when the signal arrived (it
 *    entered before the delivery was numbered), the signal is not in the
 *    call's mask (ppoll/pselect/epoll_pwait/sigsuspend), and either the
 *    call never restarts (poll, select, epoll_wait, sleeps, pause,
 *    sigsuspend, socket calls with SO_RCVTIMEO/SO_SNDTIMEO) or the
 *    handler was installed without SA_RESTART;
 *  - among the eligible calls the main thread's wins (Linux prefers the
 *    thread-group leader too, and the idiom "main blocks in accept(),
 *    a SIGINT handler sets a flag" depends on it); otherwise the call
 *    that has waited longest.
 * A signal that finds no eligible call interrupts nothing, as when it
 * hits a running thread under POSIX. Interrupting every parked call
 * instead would hand EINTR to threads that the kernel would never have
 * chosen and that may not expect it.
 *
 * Waiter side. A call that waits interruptibly links a cap__sig_waiter
 * (on its stack) into a registry of waiting calls (cap__sig_enter ...
 * cap__sig_leave) with an interrupt callback for its wait structure.
 * Dispatch sets sw->sig and then runs the callback, which takes the wait
 * structure's lock and wakes the thread if it is parked there.
 *
 * Two kinds of calls. Most calls stay in the registry for the whole call:
 * poll, select, epoll_wait, sleeps, sigsuspend, offloaded calls, connect.
 * Their callback always takes the delivery, and the waiter checks sw->sig
 * under that same lock just before parking, so a delivery that lands
 * between two parks of one call, or before the first, is never lost:
 * either the check sees sig, or the callback finds it parked. The
 * blocking transfers (read, write, recv, send, accept... through
 * cap__io_do) are "parked-only": they enter the registry only when they
 * are about to park and leave it as soon as they wake, so a transfer that
 * finds data pays nothing for signals. Between two parks such a call is
 * running, not waiting: its callback refuses a delivery that finds it
 * unparked (it returns false and dispatch offers the delivery to the next
 * call), as a signal passes a running thread by.
 *
 * Registry and cost. The registry is sharded: one list per worker (the
 * one the call entered on) and one for the main thread, each under its
 * own lock, and in each shard the calls that a SA_RESTART handler
 * restarts (read-like, cap__intr.restart) apart from the others. A call
 * is appended when it enters, so every list is in entry order (epoch and
 * ticket grow along it). Entering and leaving cost one uncontended lock
 * each (a shard is written by its own worker but for a call that leaves
 * after migrating), and leaving writes the list neighbours' records (on
 * other threads' stacks, perhaps out of cache with thousands parked). A dispatch takes every shard's lock, looks at the
 * main thread's list first and then at the head of each other list,
 * skipping only calls it cannot take (already interrupted, a mask that
 * blocks the signal, a parked-only call that refused it) and stopping at
 * the first call that entered after the delivery; restartable lists are
 * not looked at for a SA_RESTART delivery. So a delivery costs O(shards
 * + skipped calls), not O(threads) or O(descriptors): a timer signal
 * every millisecond beside many parked threads stays cheap
 * (bench/micro/sigdeliver.c).
 *
 * Lock order: the dispatch lock, every shard lock (main's, then by
 * worker), then a wait structure's lock (descriptor, poll group or
 * offload job). Waiters take a shard lock only on its own.
 */
#ifndef CAP_IO_SIGINTR_H
#define CAP_IO_SIGINTR_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cap__thread;

/* What may interrupt one call. */
typedef struct cap__intr {
    uint64_t blocked; /* bit (sig - 1) set: sig never interrupts the call */
    bool restart;     /* read-like: a SA_RESTART handler restarts it instead */
    bool cancel;      /* a cancellation point: a cancel request ends its waits
                         with ECANCELED (src/sync/cancel.h); the constants
                         below leave it false */
} cap__intr;

/* poll, select, epoll_wait, sleeps, pause: EINTR whatever the flags. */
extern __attribute__((visibility("hidden"))) const cap__intr cap__intr_always;
/* read, write, accept, connect, ... on a descriptor without timeout. */
extern __attribute__((visibility("hidden"))) const cap__intr cap__intr_restart;

/* The first 64 signals of set as a cap__intr mask. */
uint64_t cap__sig_bits(const sigset_t *set);

typedef struct cap__sig_waiter cap__sig_waiter;
struct cap__sig_list;
struct cap__sig_waiter {
    cap__sig_waiter *next, *prev;  /* [list->lock] the shard list, in entry order */
    struct cap__sig_list *list;    /* the list it entered */
    cap__intr in;
    bool is_main;
    uint64_t epoch;                /* deliveries numbered >= epoch may interrupt it */
    uint64_t ticket;               /* entry order: the longest waiter goes first */
    uint64_t passed;               /* [dispatch] seq + 1 of a delivery it refused */
    _Atomic int sig;               /* the signal that interrupted the call, or 0 */
    bool (*interrupt)(void *arg);  /* wakes it; dispatch calls it under the list lock */
    void *arg;
};

/* Makes the calling user thread's current call interruptible as in says
 * until cap__sig_leave. interrupt(arg) runs with sw->sig already set; it
 * must take the wait structure's lock and wake the thread if it is parked
 * there, and return true; it may return false only if the call is not
 * waiting and will not look at sw->sig (a parked-only call between two
 * parks): dispatch then clears sig and offers the delivery to another
 * call. It may run at any time until cap__sig_leave returns. */
void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, bool (*interrupt)(void *),
                    void *arg);
/* Ends it; returns the signal that interrupted the call, or 0. */
int cap__sig_leave(cap__sig_waiter *sw);
/* True once a signal interrupted the call; check under the wait
 * structure's lock before parking. */
static inline bool cap__sig_hit(cap__sig_waiter *sw)
{
    return atomic_load(&sw->sig) != 0;
}

/* Handler side: a handler for sig, installed with sa_flags, has just run
 * on this kernel thread. Async-signal-safe. */
void cap__sig_caught(int sig, int sa_flags);

/*
 * Before the program's first handler. Only a handler of the program's
 * reaches cap__sig_caught (src/stack/signal.c), so until it installs one
 * nothing can interrupt a parked call, and a parked-only call (the
 * blocking transfers) parks without entering the registry: for a server
 * that installs no handler this saves the registry's two locks and list
 * edits on every park. cap__sig_handled is 0 until then, and stays
 * non-zero from cap__sig_handler_coming on, which sigaction calls before
 * it gives the kernel a handler function: it sets the flag, then wakes
 * every thread parked on a descriptor exclusively (a spurious wake-up: the
 * call tries again and parks anew, now registered). A call that decided
 * to skip the registry looks at the flag again under the descriptor's
 * lock before it links its record (io/wait.c), so either it sees the flag
 * and registers, or the sweep, which takes every descriptor's lock after
 * setting it, finds it parked. Semaphore waits, which stay registered from
 * their first park to their return, skip the registry the same way until
 * the flag is set (sync/sem.c); the sweep wakes those parked on an address
 * too (sched/park.h, cap__wait_rewake_unregistered), under each address
 * bucket's lock. The first handler's deliveries come only after all this.
 */
extern __attribute__((visibility("hidden"))) _Atomic int cap__sig_handled;
void cap__sig_handler_coming(void);

/*
 * Kicks (src/stack/signal.c): CAP__SIG_KICK sent to one kernel thread of
 * ours to interrupt the system call it is blocked in (the offload pool,
 * io/offload.c). From the first cap__sig_kick_reserve on, the handler
 * trampoline stays installed for the signal whatever the program asks: a
 * kick runs no handler of the program's, any other delivery runs the
 * program's handler if it installed one and is ignored otherwise (SIGURG's
 * default action). The program's SA_RESTART and SA_RESETHAND for the
 * signal are honoured by the trampoline rather than given to the kernel,
 * so a blocking system call of a foreign thread interrupted by the
 * program's own SIGURG fails with EINTR even with SA_RESTART.
 */
#define CAP__SIG_KICK SIGURG
void cap__sig_kick_reserve(void);
/* Queues a kick to kernel thread tid of this process. */
void cap__sig_kick(pid_t tid);

/* fork (intercept/handover.c), src/stack/signal.c: blocks every signal
 * of the calling kernel thread (the old mask in *saved) and takes the
 * sigaction table's lock, so the child never inherits it held by a
 * kernel thread it does not have; cap__sig_fork_done, in the parent and
 * in the child, releases it and restores the mask. errno preserved. */
void cap__sig_fork_prepare(sigset_t *saved);
/* In a fork's child (io/start.c): _begin forgets every parked call (the
 * parent's threads'), before the descriptor table is walked; _end, once
 * the child's own descriptor backend runs, gives it its own eventfd. */
void cap__sig_forked_begin(void);
void cap__sig_forked_end(void);
void cap__sig_fork_done(const sigset_t *saved);

/* Whether a handler ran whose delivery no dispatch has handled yet: a
 * hint (racy, relaxed) for cap__io_pending, so that a worker kept busy by
 * runnable threads still harvests the eventfd when the interrupted calls
 * or the deferred wake-ups are ones that no I/O wait counts (semaphore
 * waits). A delivery the ring dropped keeps it true until the next
 * dispatch, which catches up. */
bool cap__sig_undispatched(void);

/* Creates and watches the eventfd that brings deliveries to a worker.
 * Called once by cap__io_start. */
void cap__sig_start(void);

#endif /* CAP_IO_SIGINTR_H */

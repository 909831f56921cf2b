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
 * Waiter side. A call that parks interruptibly links a cap__sig_waiter
 * (on its stack) to its own thread's TCB for the whole call
 * (cap__sig_enter ... cap__sig_leave, under the TCB's sig_lock), with an
 * interrupt callback for its wait structure; a dispatch walks the TCBs. Dispatch sets
 * sw->sig and then runs the callback, which takes the wait structure's
 * lock and wakes the thread if it is parked there. The waiter checks
 * sw->sig under that same lock just before parking, so a delivery that
 * lands between two parks of one call, or before the first, is never
 * lost: either the check sees sig, or the callback finds it parked.
 *
 * Lock order: the dispatch lock, a TCB's sig_lock, then a wait
 * structure's lock (descriptor, poll group or offload job). Waiters take
 * their sig_lock only on its own.
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
struct cap__sig_waiter {
    cap__sig_waiter *outer;        /* [thread->sig_lock] the call it is nested in */
    struct cap__thread *thread;
    cap__intr in;
    uint64_t epoch;                /* deliveries numbered >= epoch may interrupt it */
    uint64_t ticket;               /* entry order: the longest waiter goes first */
    _Atomic int sig;               /* the signal that interrupted the call, or 0 */
    void (*interrupt)(void *arg);  /* wakes it; dispatch calls it under sig_lock */
    void *arg;
};

/* Makes the calling user thread's current call interruptible as in says
 * until cap__sig_leave. interrupt(arg) must take the wait structure's
 * lock and wake the thread if it is parked there; it may run at any time
 * until cap__sig_leave returns. */
void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, void (*interrupt)(void *),
                    void *arg);
/* Ends it; returns the signal that interrupted the call, or 0. */
int cap__sig_leave(cap__sig_waiter *sw);
/* True once a signal interrupted the call; check under the wait
 * structure's lock before parking. */
static inline bool cap__sig_hit(cap__sig_waiter *sw)
{
    return atomic_load(&sw->sig) != 0;
}

/*
 * Parked-only calls. The blocking transfers (read, write, recv, send,
 * accept... through cap__io_do) do not register: only while such a call
 * is parked on its descriptor, its exclusive waiter record (wait.h) carries
 * what may interrupt it, stamped under the descriptor's lock as it links
 * itself (cap__sig_stamp), and dispatch finds it by walking the
 * descriptor table (io/wait.c, cap__io_sig_scan) and interrupts it there
 * (cap__io_sig_interrupt, EINTR as the wait's result). Between two parks
 * such a call is running, not waiting, and a signal passes it by as it
 * passes a running thread; the longest waiter is then the one parked
 * longest. What a parking transfer pays is two loads and a store or two
 * under a lock it takes anyway, where registering cost two locked
 * sections per call.
 */

/* Dispatch's choice for one delivery: the best eligible call seen so
 * far, by value (its record may go once the lock it was read under is
 * released). */
typedef struct cap__sig_pick {
    int sig;                   /* the delivery */
    bool restart;
    uint64_t seq;
    bool found;                /* the best so far: */
    bool is_main;
    uint64_t ticket;
    const void *rec;           /*   its record, only to find it again */
    struct cap__thread *t;     /*   a registered call: its thread */
    struct cap__fd *f;         /*   a parked-only call: its descriptor */
} cap__sig_pick;

/* Whether a call of what in allows, stamped epoch, may take p's delivery. */
static inline bool cap__sig_eligible(const cap__intr *in, uint64_t epoch,
                                     const cap__sig_pick *p)
{
    return epoch <= p->seq && !(in->blocked & (1ull << (p->sig - 1))) &&
           !(in->restart && p->restart);
}

/* Whether a call is better than p's best: the main thread's first, then
 * the longest waiter. */
static inline bool cap__sig_better(const cap__sig_pick *p, bool is_main, uint64_t ticket)
{
    if (!p->found)
        return true;
    if (is_main != p->is_main)
        return is_main;
    return ticket < p->ticket;
}

/* The epoch and ticket of a parked-only call, as it links itself under
 * its descriptor's lock. */
void cap__sig_stamp(uint64_t *epoch, uint64_t *ticket);

/* Handler side: a handler for sig, installed with sa_flags, has just run
 * on this kernel thread. Async-signal-safe. */
void cap__sig_caught(int sig, int sa_flags);

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

/* Creates and watches the eventfd that brings deliveries to a worker.
 * Called once by cap__io_start. */
void cap__sig_start(void);

#endif /* CAP_IO_SIGINTR_H */

/* SPDX-License-Identifier: MIT */
/*
 * Signals interrupting parked calls: how a blocking call of a user thread
 * returns EINTR when a caught signal arrives (signal(7), "Interruption of
 * system calls and library functions by signal handlers").
 *
 * In M:N the handler runs on whatever kernel thread the kernel picked
 * (a worker, an offload thread), while the user thread that should see
 * EINTR is parked. So a signal is handled in parts:
 *
 *  1. Handler side, async-signal-safe, around the program's handler in
 *     the trampoline (src/stack/signal.c): cap__sig_begin, before the
 *     handler runs, numbers the delivery (one atomic fetch-add) and
 *     records (sig, SA_RESTART of the flags in force for this delivery)
 *     in a ring slot; cap__sig_end, once the handler returned (or a jump
 *     left it), marks the delivery over and writes the runtime's eventfd.
 *     No lock, no allocation, errno preserved.
 *  2. Dispatch, in ordinary context: the eventfd is one of the runtime's
 *     watched descriptors (cap__io_watch), so the worker that harvests it
 *     reads the ring and, for each delivery whose handler is over,
 *     interrupts at most one waiting call, chosen as follows. A call that
 *     an event woke may run the same dispatch itself first ("Ordering"
 *     below).
 *
 * Which thread a process-directed signal interrupts. POSIX delivers it to
 * exactly one thread that does not block it (each user thread has its
 * mask: io/sigmask.h), and we pick one that the delivery can actually
 * interrupt (a signal sent to one thread takes another way:
 * io/sigdirect.h, cap__sig_direct below):
 *  - a call is eligible if it was waiting when the signal arrived (it
 *    entered before the delivery was numbered), the signal is not in the
 *    call's mask (ppoll/pselect/epoll_pwait/sigsuspend), and either the
 *    call never restarts (poll, select, epoll_wait, sleeps, pause,
 *    sigsuspend, socket calls with SO_RCVTIMEO/SO_SNDTIMEO) or the
 *    handler was installed without SA_RESTART;
 *  - a SIGCHLD the kernel sent as a child ended is not eligible for a
 *    call that entered after a wait of the program's returned that child
 *    (io/sigchld.h): it was sent before that call began, however late its
 *    handler ran;
 *  - among the eligible calls the main thread's wins (Linux prefers the
 *    thread-group leader too, and the idiom "main blocks in accept(),
 *    a SIGINT handler sets a flag" depends on it); otherwise the call
 *    that has waited longest.
 * A signal that finds no eligible call interrupts nothing, as when it
 * hits a running thread under POSIX. Interrupting every parked call
 * instead would hand EINTR to threads that the kernel would never have
 * chosen and that may not expect it. A signal aimed at the thread that
 * ran on the handler's kernel thread (a fault, SIGPIPE or SIGXFSZ from a
 * write, raise()) is never numbered at all (src/stack/signal.c): that
 * thread was running.
 *
 * Waiter side. A call that waits interruptibly links a cap__sig_waiter
 * (on its stack) into a registry of waiting calls (cap__sig_enter ...
 * cap__sig_leave) with an interrupt callback for its wait structure.
 * Dispatch sets sw->hit (which delivery) and sw->sig and then runs the
 * callback, which takes the wait structure's lock and wakes the thread if
 * it is parked there.
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
 * unparked (it returns false and dispatch offers the delivery to another
 * call), as a signal passes a running thread by, unless an event woke
 * it and it resumed after the delivery was numbered (below). A signal
 * sent to its thread alone has its handler run there, outside the
 * registry (io/sigdirect.h); the call sees that by the thread's count
 * of such handlers (cap__sig_runs) and ends with EINTR instead of
 * parking again (io/wait.c, cap__io_do_wait).
 *
 * Ordering. Linux interrupts the call before the handler runs (on the
 * interrupted thread), and the call returns EINTR after it:
 *  (a) nothing the handler does can reach the call first: a thread that
 *      sees the handler's flag and writes to the pipe the call reads
 *      never hands it that byte, which stays for the next read;
 *  (b) when the call returns EINTR, the handler has run: the "handler
 *      sets a flag, the loop that got EINTR tests it" idiom.
 * Here the handler runs elsewhere, and the choice needs the registry's
 * locks, which a handler cannot take (it may have interrupted their
 * holder). So the choice is made later, and made as if it had been made
 * before the handler:
 *  - the delivery is numbered before the program's handler runs
 *    (cap__sig_begin): every effect of the handler happens after that;
 *  - an event that wakes a waiting call marks its wait record woken
 *    (CAP__SIG_WOKEN, under the wait structure's lock, with the unlink),
 *    and the call, as it resumes, replaces the mark with the number of
 *    deliveries so far (cap__sig_count): until then it is still inside
 *    the call, as a thread woken in the kernel is until it returns, and
 *    a parked-only call's callback takes any delivery; from then on only
 *    those numbered below that count (the exclusive record is written
 *    without the lock, io/wait.c);
 *  - the woken call, before it acts on the event (a parked-only transfer
 *    before it leaves the registry and consumes anything), settles
 *    (cap__sig_settle) on that count: if a delivery numbered since it
 *    entered and below the count is not dispatched yet, it runs the
 *    dispatch itself, synchronously, for those deliveries too whose
 *    handler still runs. If a delivery below the count chose it
 *    (cap__sig_hit_first), the call returns EINTR, whatever the event
 *    brought: a transfer consumed nothing, and a poll reports nothing.
 *    A delivery numbered after the count found it running: a poll then
 *    reports its readiness first, as Linux's does. A poll that a
 *    delivery hit with no event first (the delivery woke it, or came
 *    between two of its parks) returns EINTR without looking at
 *    readiness again: what it would find may be the handler's doing;
 *  - why the count at resumption and not at the event: what a woken call
 *    finds is whatever is there when it looks, not what the event
 *    reported. An event may be stale (readiness that an earlier call
 *    already consumed, harvested late), and the data the call then finds
 *    may be a handler's doing: counted at the event, a delivery between
 *    the event and the look found the call "running" and the handler's
 *    data reached it (1 run in 25 of
 *    io/signal_interrupt_precedes_handler_effects under load lost a
 *    round so). The price: a call that real data woke returns EINTR if a
 *    signal chose it before it resumed (the data stays for the next
 *    call), where Linux returns the data when the data came first; the
 *    signal did come while the call was in progress, so EINTR is what
 *    POSIX allows, and nothing is lost;
 *  - (b): the eventfd is written when the handler is over (cap__sig_end),
 *    and the worker's dispatch handles a delivery only then (in number
 *    order, but one whose handler still runs does not hold up the later
 *    ones). A call that a settling call's dispatch chose while the
 *    handler still ran waits in cap__sig_leave until it is over, before
 *    it returns EINTR. That is the only wait: the other calls go on.
 *    (Written before the handler, the eventfd would have the worker
 *    choose while the handler runs, and every call chosen so would wait;
 *    and a handler left by a jump would already have interrupted one.)
 *  - the system calls the runtime makes on a call's behalf are not the
 *    call: the kernel fails even a zero-timeout poll with EINTR when a
 *    handler runs on that kernel thread during it, and such a check
 *    counts as "not ready" (io/wait.c, cap__ic_revents_now); only the registry's
 *    choice gives a call EINTR, so one delivery interrupts one call.
 * Handlers that never return: a jump out of the handler (siglongjmp,
 *  longjmp; src/stack/longjmp.c) ends its delivery there (cap__sig_end
 *  with jumped), and a delivery left that way interrupts nothing (the
 *  thread that ran the handler took the signal, running), unless a
 *  settling call chose for it while the handler still ran. Leaving a
 *  handler by other means (setcontext, an exception) is not seen: the
 *  worker's dispatch never handles that delivery, and a call chosen for
 *  it by a settling call returns EINTR after a second (wait_over's
 *  bound) instead of when the handler ends.
 * A signal that arrives while the program's handler of another one runs
 *  is numbered after it, and its handler ends first; each is dispatched
 *  once its own handler is over. SA_RESETHAND and a handler that
 *  re-installs itself change the table for later deliveries; this one's
 *  flags were read before its handler ran.
 * Calls that do not settle: sleeps (only a timer ends them, which no
 *  handler causes), and semaphore waits and offloaded calls, which take
 *  their unit or complete their call before they look at the signal
 *  (sync/sem.c, io/offload.c): a post or a completion caused by the
 *  handler still wins there. The cost elsewhere: a waker reads one
 *  mostly-shared word; a woken call compares two of its own; a transfer
 *  that does not park, nothing.
 *
 * Registry and cost. The registry is sharded: one list per worker (the
 * one the call entered on) and one for the main thread, each under its
 * own lock, and in each shard the calls that a SA_RESTART handler
 * restarts (read-like, cap__intr.restart) apart from the others. A call
 * is appended when it enters, so every list is in entry order (epoch and
 * ticket grow along it). Entering and leaving cost one uncontended lock
 * each (a shard is written by its own worker but for a call that leaves
 * after migrating), and leaving writes the list neighbours' records (on
 * other threads' stacks, perhaps out of cache with thousands parked). A
 * dispatch takes every shard's lock, looks at the main thread's list
 * first and then at the head of each other list, skipping only calls it
 * cannot take (already interrupted, a mask that blocks the signal, a
 * parked-only call that refused it) and stopping at the first call that
 * entered after the delivery; restartable lists are
 * not looked at for a SA_RESTART delivery. So a delivery costs O(shards
 * + skipped calls), not O(threads) or O(descriptors): a timer signal
 * every millisecond beside many parked threads stays cheap
 * (bench/micro/sigdeliver.c).
 *
 * Lock order: the dispatch lock, every shard lock (main's, then by
 * worker), then a wait structure's lock (descriptor, poll group or
 * offload job). Waiters take a shard lock only on its own, and settle
 * (the whole order from the top) holding nothing.
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
    bool masked;      /* blocked is the call's own signal mask, its thread's
                         while it waits (sigsuspend, pselect, ppoll,
                         epoll_pwait: io/sigmask.h); otherwise the thread's
                         mask is added to blocked as the call registers */
    uint64_t takes;   /* signals the call takes from its thread's pending
                         set (sigwait's; io/sigdirect.h): one sent to the
                         thread ends its wait, blocked or not */
    uint64_t wakes;   /* signals that, sent to the thread while the call
                         blocks them, wake it to look again and stay
                         pending (a poll of a signalfd of them, a wait on
                         an epoll set holding a signalfd, a parked
                         signalfd read: io/sigfd.h); a poll group's call,
                         or a call on one descriptor that sets
                         cap__io_call.sends before each look */
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
    _Atomic uint64_t hit;          /* seq + 1 of the delivery that set sig; 0: a
                                      signal sent to the thread (cap__sig_direct) */
    _Atomic int sig;               /* the signal that interrupted the call, or 0 */
    uint64_t mask_before;          /* in.masked: its thread's mask outside the call */
    struct cap__thread *thread;    /* the calling thread */
    cap__sig_waiter *outer;        /* thread->sig_call before it entered */
    bool (*interrupt)(void *arg);  /* wakes it; dispatch calls it under the list lock */
    void *arg;
};

/* Makes the calling user thread's current call interruptible as in says
 * until cap__sig_leave. interrupt(arg) runs with sw->sig already set; it
 * must take the wait structure's lock and wake the thread if it is parked
 * there, and return true; it may return false only if the call is not
 * waiting and will not look at sw->sig (a parked-only call between two
 * parks, that no event woke after delivery sw->hit - 1 was numbered):
 * dispatch then clears sig and offers the delivery to another call. It
 * may run at any time until cap__sig_leave returns. */
void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, bool (*interrupt)(void *),
                    void *arg);
/* Ends it; returns the signal that interrupted the call, or 0. If one
 * did, returns only once that delivery's handler is over ("Ordering"). */
int cap__sig_leave(cap__sig_waiter *sw);
/* cap__sig_leave for a call that goes on afterwards (a parked-only call
 * between two parks): also sets *direct to a signal sent to the thread
 * and delivered as it left whose handler interrupts the call (no
 * SA_RESTART, or a call that is never restarted), else 0; the call then
 * ends with EINTR rather than park again. */
int cap__sig_leave_direct(cap__sig_waiter *sw, int *direct);
/* Inside a registered call that waits again after a wake-up (a
 * semaphore wait): signals sent to its thread meanwhile are delivered (a
 * handler's jump is handed to the thread, io/sigdirect.h), and one that
 * interrupts this kind of call marks it as cap__sig_direct would. Call
 * before parking again, holding no lock. */
void cap__sig_call_pending_slow(cap__sig_waiter *sw);
static inline void cap__sig_call_pending(cap__sig_waiter *sw, const _Atomic uint64_t *pending)
{
    if (__builtin_expect(atomic_load_explicit(pending, memory_order_relaxed) != 0, 0))
        cap__sig_call_pending_slow(sw);
}

/* True once a signal interrupted the call; check under the wait
 * structure's lock before parking. */
static inline bool cap__sig_hit(cap__sig_waiter *sw)
{
    return atomic_load(&sw->sig) != 0;
}

/* The number of deliveries so far: what a woken call records as it
 * resumes ("Ordering"). Relaxed: a delivery
 * whose handler's effect this thread saw was numbered before that
 * effect, so it is counted. */
struct cap__sig_counter {
    _Alignas(64) _Atomic uint64_t n; /* a line of its own (io/sigintr.c) */
};
extern __attribute__((visibility("hidden"))) struct cap__sig_counter cap__sig_deliveries;
static inline uint64_t cap__sig_count(void)
{
    return atomic_load_explicit(&cap__sig_deliveries.n, memory_order_relaxed);
}

/* The mark an event leaves on the wait record of a call it woke, until
 * the call resumes ("Ordering"): above every delivery's number + 1. */
#define CAP__SIG_WOKEN UINT64_MAX

void cap__sig_settle_slow(uint64_t woke);
/* A registered call sw, woken by an event, that resumed when
 * cap__sig_count() read woke: returns once every delivery numbered below
 * woke has been dispatched, running the dispatch itself if need be. Call
 * while still registered, holding no lock. */
static inline void cap__sig_settle(cap__sig_waiter *sw, uint64_t woke)
{
    if (woke > sw->epoch) /* else nothing was numbered while it waited */
        cap__sig_settle_slow(woke);
}
/* After cap__sig_settle(sw, woke) (woke 0: no event woke it): whether a
 * delivery interrupted the call that was numbered before it resumed, or
 * with no event at all; the call then returns EINTR before anything the
 * event, or the handler, brought. */
static inline bool cap__sig_hit_first(cap__sig_waiter *sw, uint64_t woke)
{
    return atomic_load(&sw->sig) != 0 &&
           (woke == 0 || atomic_load_explicit(&sw->hit, memory_order_relaxed) <= woke);
}

/* Handler side (the trampoline), async-signal-safe. _begin, before the
 * program's handler for sig (installed with sa_flags) runs, numbers the
 * delivery and returns its token (seq + 1; 0: a signal past 64, which
 * the registry does not know). _end, once that handler returned
 * (jumped: a jump left it), marks it over and brings a dispatch; with
 * token 0 (a delivery not numbered, or aimed at the thread it
 * interrupted: src/stack/signal.c) it brings one only if the handler left
 * work for it (util/sigctx.h). chld: for a SIGCHLD the kernel sent as a
 * child ended, that child (io/sigchld.h), else 0. */
uint64_t cap__sig_begin(int sig, int sa_flags, pid_t chld);
void cap__sig_end(uint64_t token, bool jumped);
/* Before _end: the handler of delivery token jumped into t's frames
 * (src/stack/signal.c), so the dispatch interrupts t's parked call, and
 * no other, whatever flags and masks say (none: a fatal error). */
void cap__sig_force(uint64_t token, struct cap__thread *t);

/* A call's entry ticket now: for a record that calls entered later must
 * order after (io/sigchld.h). Any thread, a handler too. */
uint64_t cap__sig_ticket(void);

/* A signal sent to t alone (io/sigdirect.h), pending in its set: if t
 * waits in a registered call, interrupts it (EINTR; its sw->hit is 0, no
 * delivery's number), or for a read-like call, a semaphore wait or an
 * offloaded call and a SA_RESTART handler (restart) wakes it to go on.
 * Under the registry's locks, so a call that registers meanwhile finds
 * the signal pending as it enters. CAP__DIRECT_NONE: no call of t's to
 * wake now (none registered, or one running between two parks); _DONE:
 * woken, or interrupted already, or sig no longer pending (delivered or
 * taken since the sender looked: a call of t's registered now is not
 * the one it was sent in); _HELD: its call keeps the signal
 * pending (its mask blocks it, or it cannot be woken to go on), to be
 * delivered as the call ends. */
enum cap__sig_direct_result { CAP__DIRECT_NONE, CAP__DIRECT_DONE, CAP__DIRECT_HELD };
enum cap__sig_direct_result cap__sig_direct(struct cap__thread *t, int sig, bool restart);

/* For a process-directed signal routed away from a thread that blocks it
 * (io/sigroute.h): the thread of the call a delivery would interrupt
 * (restart: the handler has SA_RESTART), else of a sigwait of sig
 * (*takes set: it blocks sig and takes it), else (restart) of a call the
 * signal would restart; *h its handle. NULL if no call waiting now takes
 * it. */
struct cap__thread *cap__sig_route_pick(int sig, bool restart, uint64_t *h, bool *takes);

/*
 * Before the program's first handler. Only a handler of the program's
 * reaches cap__sig_begin (src/stack/signal.c), so until it installs one
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
 * ours: to interrupt the system call an offload pool thread is blocked in
 * (io/offload.c), or to run the kick handler on a worker (a new signal
 * mask, io/sigmask.h; a signal sent to the user thread it runs,
 * io/sigdirect.h). From the first cap__sig_kick_reserve on, the handler
 * trampoline stays installed for the signal whatever the program asks: a
 * kick runs no handler of the program's, any other delivery runs the
 * program's handler if it installed one and is ignored otherwise (SIGURG's
 * default action). The kernel gets SA_RESTART, so a kick that lands on a
 * worker blocked in a system call the runtime does not see lets the call
 * go on; the trampoline makes the call fail with EINTR where that is the
 * point (arch/sigrestart.h): a pool thread's, and any call the program's
 * own handler installed without SA_RESTART interrupts. SA_RESETHAND is
 * honoured by the trampoline too.
 */
#define CAP__SIG_KICK SIGURG
void cap__sig_kick_reserve(void);
/* Queues a kick to kernel thread tid of this process (reserving the
 * signal first, if that was not done yet). */
void cap__sig_kick(pid_t tid);
/* Raises sig on the calling kernel thread for the program (tgkill, or
 * rt_tgsigqueueinfo with info); the system call's result (-1 and errno).
 * The program's CAP__SIG_KICK is a standard signal like any other, and a
 * kick already pending on this kernel thread (the kick handler's own
 * sa_mask holds the next one) would swallow it: one instance of a
 * standard signal is pending at a time, with the first one's siginfo. So
 * it is noted as owed until a delivery of the program's, and a kick that
 * finds it owed raises it again (src/stack/signal.c). Async-signal-safe. */
long cap__sig_raise_here(int sig, const siginfo_t *info);

/*
 * A last step before a signal's default action ends the process
 * (src/stack/signal.c): from cap__sig_last_step_arm(step) on, every
 * signal whose default action ends the process without a core dump
 * (SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM, SIGUSR1, ..., the real-time
 * ones) runs a hidden handler while its disposition is SIG_DFL: now,
 * whenever the program sets SIG_DFL again, and after a one-shot handler's
 * delivery. sigaction reports SIG_DFL as ever, and a disposition the
 * process inherited (SIG_IGN under nohup) stays. The handler blocks every
 * signal, calls step, puts the kernel's SIG_DFL back and sends the signal
 * again to its own kernel thread: the process ends by it, with the status
 * the first would have given. step runs in a signal handler that may have
 * interrupted the runtime anywhere: it may only try locks for a bounded
 * time. Signals that dump core, SIGKILL and the stop signals are the
 * kernel's alone. An exec gives the new program the kernel's SIG_DFL.
 */
void cap__sig_last_step_arm(void (*step)(void));

/* fork (intercept/handover.c), src/stack/signal.c: blocks every signal
 * of the calling kernel thread (the old mask in *saved) and takes the
 * sigaction table's lock, so the child never inherits it held by a
 * kernel thread it does not have; cap__sig_fork_done, in the parent and
 * in the child, releases it and restores the mask. errno preserved. */
void cap__sig_fork_prepare(sigset_t *saved);
/* In a fork's child (io/start.c): _begin forgets every parked call (the
 * parent's threads'), before the descriptor table is walked; _end, once
 * the child's own descriptor backend runs, closes the parent's eventfd
 * and gives it its own. */
void cap__sig_forked_begin(void);
void cap__sig_forked_end(void);
void cap__sig_fork_done(const sigset_t *saved);

/* Whether a delivery was numbered (its handler running or over) that no
 * dispatch has handled yet: a hint (racy, relaxed) for cap__io_pending, so that a worker kept busy by
 * runnable threads still harvests the eventfd when the interrupted calls
 * or the deferred wake-ups are ones that no I/O wait counts (semaphore
 * waits). A delivery the ring dropped keeps it true until the next
 * dispatch, which catches up. */
bool cap__sig_undispatched(void);

/* Creates and watches the eventfd that brings deliveries to a worker.
 * Called once by cap__io_start. */
void cap__sig_start(void);

#endif /* CAP_IO_SIGINTR_H */

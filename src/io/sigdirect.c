/* SPDX-License-Identifier: MIT */
/*
 * Signals directed at one user thread: the sender (cap_thread_kill,
 * cap_thread_sigqueue, raise) and the thread's delivery of its own
 * pending signals. The
 * protocol is in sigdirect.h; the registry's part (cap__sig_direct) is in
 * io/sigintr.c.
 *
 * Invariant: a bit is set in a thread's sig_pending only while the
 * thread lives (under its TCB lock, which its exit takes to become
 * EXITED; a send from a handler checks without the lock, so a TCB
 * released and reused in that instant could get a stray bit), and
 * cleared by whoever delivers or takes it (an atomic fetch-and: exactly
 * one of them); a new thread starts with none.
 *
 * Real-time signals queue, as POSIX wants: each has a count of pending
 * instances in the TCB (sig_queued, at most QUEUE_MAX; a send beyond it
 * fails with EAGAIN, as the kernel's does at RLIMIT_SIGPENDING), and its
 * bit says the count is not 0. A sender counts first, then sets the bit;
 * a taker counts down and clears the bit when it took the last one, then
 * looks at the count again and sets the bit back if a sender counted
 * meanwhile. So the bit can be seen set with the count at 0 for a
 * moment (a take then settles the bit itself and fails), but never stays
 * clear while instances are counted. Each instance is delivered by its own
 * raise (the kernel queues real-time signals too).
 *
 * A sender counts in two steps, in one word per signal: it reserves room
 * first (the high byte, counted against QUEUE_MAX), hands its value's
 * slot to the thread, and only then makes the instance one a taker can
 * take (the low byte). A delivery claims the oldest slot handed for its
 * signal (io/sigroute.h), so every instance taken has its slot handed by
 * then. When the count went up before the slot was handed, a thread that
 * took two instances at once could run its handler for the second before
 * that sender handed the slot: no value there, and the slot was left for
 * the next delivery.
 */
#include "io/sigdirect.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/sigframe.h"
#include "arch/syscall.h"
#include "capriccio.h"
#include "io/sigintr.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "io/sigsafe.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/sigctx.h"
#include "util/spin.h"

static uint64_t bit(int sig)
{
    return UINT64_C(1) << (sig - 1);
}

enum { RT_FIRST = 34, QUEUE_MAX = 255, SENDING = 0x100 };

/* sig's instance count, for a real-time signal; NULL for the others. */
static _Atomic uint16_t *queued(cap__thread *t, int sig)
{
    return sig >= RT_FIRST && sig < RT_FIRST + CAP__SIG_QUEUED ? &t->sig_queued[sig - RT_FIRST]
                                                                : NULL;
}

/* The instances of a count word a taker may take. */
static unsigned pending_in(uint16_t n)
{
    return n & 0xff;
}

/* Reserves room for one more instance of sig for t (then the caller
 * hands its slot and counts it in); false if QUEUE_MAX are pending or
 * being sent. */
static bool reserve(cap__thread *t, int sig)
{
    _Atomic uint16_t *q = queued(t, sig);
    if (q == NULL)
        return true;
    uint16_t n = atomic_load(q);
    do {
        if (pending_in(n) + n / SENDING >= QUEUE_MAX)
            return false;
    } while (!atomic_compare_exchange_weak(q, &n, (uint16_t)(n + SENDING)));
    return true;
}

/* The reserved instance becomes pending (then the caller sets its bit):
 * one word, so the total stays within QUEUE_MAX and the low byte never
 * carries into the high one. */
static void count_in(cap__thread *t, int sig)
{
    _Atomic uint16_t *q = queued(t, sig);
    if (q != NULL)
        atomic_fetch_sub(q, SENDING - 1);
}

/* A real-time signal's bit after its count reached 0: cleared, then set
 * back if a sender counted since. */
static void settle(cap__thread *t, int sig, _Atomic uint16_t *q)
{
    atomic_fetch_and(&t->sig_pending, ~bit(sig));
    if (pending_in(atomic_load(q)) != 0)
        atomic_fetch_or(&t->sig_pending, bit(sig));
}

/* Takes one instance of sig out of t's set; false if there was none
 * (someone else took it first). A take that finds the bit set with the
 * count at 0 settles the bit itself: the taker that counted down may be
 * the code a handler interrupted on this kernel thread, which cannot
 * settle it before the handler returns, so waiting for it would hang. */
static bool take(cap__thread *t, int sig)
{
    _Atomic uint16_t *q = queued(t, sig);
    if (q == NULL)
        return (atomic_fetch_and(&t->sig_pending, ~bit(sig)) & bit(sig)) != 0;
    uint16_t n = atomic_load(q);
    do {
        if (pending_in(n) == 0) {
            settle(t, sig, q);
            return false;
        }
    } while (!atomic_compare_exchange_weak(q, &n, (uint16_t)(n - 1)));
    if (pending_in(n) == 1)
        settle(t, sig, q); /* the last */
    return true;
}

void cap__sig_queued_clear(cap__thread *t)
{
    /* Plain stores: no sender can reach t yet (a new thread), or none is
     * left (a fork's child). One per entry, even relaxed atomic ones, was
     * 31 stores and a loop, ~12% of a thread's create and join; the
     * memset is a handful of wide ones. */
    memset((void *)t->sig_queued, 0, sizeof t->sig_queued);
}

/* A handler of sig, sent to t alone, runs on t now (t is the thread
 * running here): counted for a transfer of t's between two parks
 * (thread.h, sig_runs). */
static void count_run(cap__thread *t, int flags)
{
    atomic_fetch_add_explicit(&t->sig_runs, 1, memory_order_relaxed);
    if (!(flags & SA_RESTART))
        atomic_fetch_add_explicit(&t->sig_runs_intr, 1, memory_order_relaxed);
}

int cap__sig_deliver_pending(cap__thread *self, bool restartable, int mode)
{
    if (cap__in_signal_handler())
        return 0; /* ordinary code of this thread delivers them */
    int interrupting = 0;
    /* A sender that finds this thread in one of the handlers below does
     * not wait for it (bring): this loop delivers what it sent. In FREE
     * mode the handler's end does (src/stack/signal.c), and a jump out of
     * the handler may leave the loop. */
    bool flagged = mode != CAP__OWN_FREE;
    if (flagged)
        atomic_store(&self->sig_delivering, true);
    for (;;) {
        /* Not those the mask of a jump handed to this thread blocks (its
         * handler jumped inside an async-signal-safe call, io/sigsafe.h):
         * the program has left the call, and they wait for that mask,
         * which the jump installs as the call returns. */
        uint64_t ready = atomic_load(&self->sig_pending) & ~cap__sigmask_of(self) &
                         ~cap__sig_jump_holds(self);
        if (ready == 0 && flagged) {
            /* The flag off, then a last look (against the sender's record,
             * then its look at the flag: sequentially consistent). */
            atomic_store(&self->sig_delivering, false);
            ready = atomic_load(&self->sig_pending) & ~cap__sigmask_of(self) &
                    ~cap__sig_jump_holds(self);
            if (ready != 0)
                atomic_store(&self->sig_delivering, true);
        }
        if (ready == 0)
            return interrupting;
        int sig = __builtin_ctzll(ready) + 1;
        if (!take(self, sig))
            continue;
        int flags = 0;
        bool handled = cap__sig_disposition(sig, &flags) == CAP__DISP_HANDLER;
        if (!handled)
            cap__sig_route_claim(self, sig, NULL); /* no trampoline will */
        else
            count_run(self, flags);
        cap__sig_own_delivery = mode;
        cap__sig_raising = sig; /* its handler may wait as this thread */
        cap__sigmask_raise_here(sig);
        cap__sig_raising = 0;
        cap__sig_own_delivery = CAP__OWN_FREE;
        if (handled && !(restartable && (flags & SA_RESTART)))
            interrupting = sig;
        if (mode == CAP__OWN_IN_CALL && atomic_load(&self->jump_due) != NULL) {
            atomic_store(&self->sig_delivering, false);
            return sig; /* its handler jumped: the call ends (and delivers
                           what is left as it leaves) */
        }
    }
}

int cap__sig_take_pending(cap__thread *self, uint64_t set)
{
    for (;;) {
        uint64_t have = atomic_load(&self->sig_pending) & set;
        if (have == 0)
            return 0;
        int sig = __builtin_ctzll(have) + 1;
        if (take(self, sig))
            return sig;
    }
}

void cap__sig_pending_kicked(void *uctx)
{
    cap__worker *w = cap__worker_self();
    cap__thread *t = w != NULL ? w->current : NULL;
    if (t == NULL || atomic_load(&t->sig_pending) == 0)
        return;
    /* Inside a call registered for signals (between two of its parks):
     * its records are linked, and the call delivers as it leaves, or the
     * sender reaches it once it parks. Inside the thread's own delivery
     * loop (a wait's or a call's): the loop delivers. */
    if (__atomic_load_n(&t->sig_call, __ATOMIC_RELAXED) != NULL || atomic_load(&t->sig_delivering))
        return;
    /* The worker switching to t or away from it: t delivers as it
     * resumes, or its sender finds it parked. */
    if (!cap__worker_runs_frames_of(w, t, cap__arch_interrupted_sp(uctx)))
        return;
    uint64_t *mask = (uint64_t *)&((ucontext_t *)uctx)->uc_sigmask;
    /* A handler's mask (io/sigmask.h, the handler mark), where the
     * trampoline's record is not linked yet or no longer: such a signal
     * is sent here but not let through, so that it arrives as that
     * handler returns to the thread's code, or nested in it if its mask
     * lets it through (another signal's handler: POSIX allows that).
     * Letting it through there ran the handler's own signal nested in
     * it, again and again while senders kept sending, until the stack
     * ran out. Not one the kernel thread's installed mask holds (a target
     * that blocked it and was not installed again since): the code the
     * handler returns to would hold it too, and it might arrive once
     * another thread runs; t's next safe point delivers it. */
    bool handler = cap__sigmask_marked(*mask);
    uint64_t held = handler ? cap__sigmask_installed() : 0;
    uint64_t ready;
    /* Not those a handed jump's mask blocks (cap__sig_deliver_pending). */
    while ((ready = atomic_load(&t->sig_pending) & ~cap__sigmask_of(t) &
                    ~cap__sig_jump_holds(t) & ~held) != 0) {
        int sig = __builtin_ctzll(ready) + 1;
        if (!take(t, sig))
            continue;
        int flags;
        if (cap__sig_disposition(sig, &flags) != CAP__DISP_HANDLER)
            cap__sig_route_claim(t, sig, NULL); /* no trampoline will */
        else
            count_run(t, flags);
        /* Pending on this kernel thread; delivered here if the handler's
         * mask lets it through, else as the kick handler returns to t.
         * Unblocking it in user code's mask keeps the workers' mask at
         * least the target: t lives and accepts sig, so the target does
         * not hold it. */
        cap__sig_raise_here(sig, NULL);
        if (!handler)
            *mask &= ~bit(sig);
    }
}

/* ---- the sender ------------------------------------------------------------ */

/* Brings t, which has sig pending (its handle h), to deliver or take it,
 * as sigdirect.h says; restart: the handler has SA_RESTART. */
static void bring(cap__thread *t, cap_thread_t h, int sig, bool restart)
{
    cap__worker *me = cap__worker_self();
    for (unsigned round = 0;; round++) {
        if (!(atomic_load(&t->sig_pending) & bit(sig)) || cap__thread_handle(t) != h)
            return; /* delivered or taken, or t is gone */
        /* The state first: a thread seen parked was registered before it
         * parked, so the registry then shows its call. */
        int state = atomic_load(&t->state);
        if (cap__sig_direct(t, sig, restart) != CAP__DIRECT_NONE)
            return;
        if (cap__sigmask_of(t) & bit(sig))
            return; /* it blocks sig now: held until it unblocks */
        if (cap__sig_wake_claim(t)) {
            /* Parked on a mutex, condition variable, join...: it runs the
             * handler and waits again (sched/park.h). */
            cap__make_runnable(t);
            return;
        }
        cap__worker *w = __atomic_load_n(&t->worker, __ATOMIC_RELAXED);
        if (state != CAP__T_RUNNING || w == NULL || w == me)
            return; /* it delivers as it resumes */
        /* In a handler of its worker's (whose sa_mask may hold sig),
         * outside a call registered for signals: the handler's end
         * delivers (src/stack/signal.c), or the thread's delivery loop
         * the handler runs in (sig_delivering). After the record, against
         * that end's store of the depth (the loop's of its flag), then its
         * look at the set (all sequentially consistent). */
        if (atomic_load(&w->handlers) != 0 && __atomic_load_n(&w->current, __ATOMIC_RELAXED) == t &&
            (__atomic_load_n(&t->sig_call, __ATOMIC_RELAXED) == NULL ||
             atomic_load(&t->sig_delivering)))
            return;
        pid_t tid = atomic_load_explicit(&w->tid, memory_order_acquire);
        /* Again now and then: a kick can merge with a program's SIGURG. */
        if (round % 4096 == 0 && tid != 0)
            cap__sig_kick(tid);
        cap__kernel_yield();
    }
}

/* ---- sent from a handler --------------------------------------------------

 * pthread_kill is async-signal-safe, but bring() takes the registry's and
 * descriptors' locks, which the code a handler interrupted may hold. A
 * handler's send is recorded here and brought by the signal dispatch that
 * follows the handler (util/sigctx.h), in ordinary context. A slot is
 * free (0), being filled (1) or ready (2). */
enum { DEFERRED = 64 };
static struct {
    _Atomic int state;
    cap__thread *t;
    cap_thread_t h;
    int sig;
    bool restart;
} deferred[DEFERRED];

static bool defer(cap__thread *t, cap_thread_t h, int sig, bool restart)
{
    for (int i = 0; i < DEFERRED; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&deferred[i].state, &free_slot, 1)) {
            deferred[i].t = t;
            deferred[i].h = h;
            deferred[i].sig = sig;
            deferred[i].restart = restart;
            atomic_store_explicit(&deferred[i].state, 2, memory_order_release);
            cap__sig_note_work_left();
            return true;
        }
    }
    return false;
}

void cap__sig_run_deferred_sends(void)
{
    for (int i = 0; i < DEFERRED; i++) {
        if (atomic_load_explicit(&deferred[i].state, memory_order_acquire) != 2)
            continue;
        cap__thread *t = deferred[i].t;
        cap_thread_t h = deferred[i].h;
        int sig = deferred[i].sig;
        bool restart = deferred[i].restart;
        atomic_store(&deferred[i].state, 0);
        bring(t, h, sig, restart);
    }
}

/* The glibc-internal signals (SIGCANCEL, SIGSETXID): pthread_kill refuses them. */
static bool internal(int sig)
{
    return sig == 32 || sig == 33;
}

/* cap_thread_kill's end in a handler, sig recorded in t's set. */
static int from_handler(cap__thread *t, cap_thread_t h, int sig, bool blocked, bool restart)
{
    cap__worker *w = cap__worker_self();
    if (w != NULL && w->current == t) {
        /* The thread this handler interrupted: delivered now, nested, as
         * the kernel would deliver a signal it sends itself, unless the
         * mask in force holds it (the running handler's sa_mask, or its
         * own signal): then it stays pending, and the handler's end
         * delivers it (src/stack/signal.c), or the delivery loop the
         * handler runs in, as the kernel would once the handler returns.
         * Raised at once, it ran nested in that handler, and a handler
         * that sent its own signal recursed. */
        uint64_t in_force = 0;
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &in_force, sizeof in_force);
        if (!blocked && !(in_force & bit(sig)) && take(t, sig))
            cap__sigmask_raise_here(sig);
        return 0;
    }
    if (!defer(t, h, sig, restart)) {
        take(t, sig);
        return EAGAIN; /* DEFERRED sends from handlers not yet brought */
    }
    return 0;
}

/* What record() left to do. */
enum recorded { GONE, DONE, RAISE_HERE, PENDING, FULL };

/* Checks h and records sig in t's set, under t's lock (without it in a
 * handler, where the code the handler interrupted may hold it: a TCB is
 * never unmapped). GONE: no such thread; DONE: nothing more (sig 0, an
 * exited thread not yet joined, whose signal is dropped as glibc does,
 * or an ignored signal t does not block); RAISE_HERE: the default action,
 * whole-process, to raise here; PENDING: pending for t (*blocked: t's
 * mask holds it; *merged: a standard signal that was pending already, of
 * which t keeps one instance); FULL: QUEUE_MAX instances of the real-time
 * signal sig are pending for t already. A value's slot (reserved, or
 * NULL) is handed to t once room for sig is reserved, before the
 * instance counts and its bit shows (*handed then true). */
static enum recorded record(cap__thread *t, cap_thread_t h, int sig, enum cap__sig_disp disp,
                            struct cap__sig_slot *slot, bool *handed, bool *blocked,
                            bool *merged)
{
    bool locked = !cap__in_signal_handler();
    if (locked)
        cap__spin_lock(&t->lock);
    int state = atomic_load(&t->state);
    enum recorded r = PENDING;
    if (cap__thread_handle(t) != h || state == CAP__T_FREE) {
        r = GONE;
    } else if (sig == 0 || state == CAP__T_EXITED) {
        r = DONE;
    } else {
        /* Against the thread's unblocking: the record, then its mask (it
         * changes the mask, then looks at the record: both sequentially
         * consistent). */
        if (!reserve(t, sig)) {
            r = FULL;
        } else {
            if (slot != NULL) {
                cap__sig_route_hand(slot, t, h);
                *handed = true;
            }
            count_in(t, sig);
            uint64_t had = atomic_fetch_or(&t->sig_pending, bit(sig));
            *merged = (had & bit(sig)) && queued(t, sig) == NULL;
            /* For epoll waits on a set holding a signalfd (io/sigfd.h):
             * a signal newly pending, or one more real-time instance, is
             * a new edge for edge-triggered registrations (Linux wakes
             * signalfd readers only then); and the count, after the bit,
             * tells a wait that looked before this send to look again. */
            if (!(had & bit(sig)) || queued(t, sig) != NULL)
                atomic_fetch_and(&t->sig_edge_told, ~bit(sig));
            atomic_fetch_add(&t->sig_sends, 1);
            *blocked = (cap__sigmask_of(t) & bit(sig)) != 0;
            if (!*blocked && disp != CAP__DISP_HANDLER)
                r = take(t, sig) && disp == CAP__DISP_DEFAULT ? RAISE_HERE : DONE;
        }
    }
    if (locked)
        cap__spin_unlock(&t->lock);
    return r;
}

bool cap__sig_take_one(cap__thread *t, int sig)
{
    return take(t, sig);
}

void cap__sig_exec_carry(cap__thread *self, uint8_t carried[CAP__SIG_MAX])
{
    memset(carried, 0, CAP__SIG_MAX);
    uint64_t carry = atomic_load(&self->sig_pending) & cap__sigmask_of(self);
    long pid = getpid(), tid = gettid();
    while (carry != 0) {
        int sig = __builtin_ctzll(carry) + 1;
        carry &= carry - 1;
        _Atomic uint16_t *q = queued(self, sig);
        unsigned n = q != NULL ? pending_in(atomic_load(q)) : 1;
        for (unsigned i = 0; i < n; i++)
            if (cap__sys6(SYS_tgkill, pid, tid, sig, 0, 0, 0) == 0)
                carried[sig - 1]++;
    }
}

void cap__sig_exec_take_back(const uint8_t carried[CAP__SIG_MAX])
{
    struct timespec zero = { 0, 0 };
    for (int sig = 1; sig <= CAP__SIG_MAX; sig++) {
        uint64_t one = bit(sig);
        for (unsigned i = 0; i < carried[sig - 1]; i++)
            cap__sys6(SYS_rt_sigtimedwait, (long)&one, 0, (long)&zero, sizeof one, 0, 0);
    }
}

void cap__sig_post_own(cap__thread *self, int sig)
{
    int flags = 0;
    enum cap__sig_disp disp = cap__sig_disposition(sig, &flags);
    bool handed = false, blocked = false, merged = false;
    if (record(self, cap__thread_handle(self), sig, disp, NULL, &handed, &blocked, &merged) ==
        RAISE_HERE)
        cap__sigmask_raise_here(sig);
}

/* cap_thread_kill, and cap_thread_sigqueue with info (its siginfo, kept
 * in a route slot handed to t for the delivery there to claim:
 * io/sigroute.h). */
static int send_to_thread(cap_thread_t h, int sig, const siginfo_t *info)
{
    if (sig < 0 || sig >= NSIG || internal(sig))
        return EINVAL;
    cap__thread *t = cap__thread_lookup(h);
    if (t == NULL)
        return ESRCH;
    int flags = 0;
    enum cap__sig_disp disp = sig != 0 ? cap__sig_disposition(sig, &flags) : CAP__DISP_IGNORE;
    /* The value's slot, reserved first: without one the send fails before
     * anything is recorded. */
    struct cap__sig_slot slot;
    bool valued = info != NULL && sig != 0;
    if (valued && !cap__sig_route_reserve(sig, info, &slot))
        return EAGAIN; /* ROUTE_SLOTS signals with values pending */
    bool handed = false, blocked = false, merged = false, restart = (flags & SA_RESTART) != 0;
    enum recorded r = record(t, h, sig, disp, valued ? &slot : NULL, &handed, &blocked, &merged);
    if (valued && !handed) {
        cap__sig_route_release(&slot);
    } else if (valued && (r != PENDING || merged || atomic_load(&t->sig_closed))) {
        /* Not left pending, or merged into an instance sent before (whose
         * siginfo it keeps, as the kernel does), or t is ending (its
         * pending signals are dropped): the slot is nobody's. */
        cap__sig_route_undirect(&slot);
    }
    switch (r) {
    case GONE:
        return ESRCH;
    case FULL:
        return EAGAIN;
    case DONE:
        return 0;
    case RAISE_HERE:
        cap__sigmask_raise_here(sig);
        return 0;
    case PENDING:
        break;
    }
    if (cap__in_signal_handler()) {
        int rc = from_handler(t, h, sig, blocked, restart);
        if (rc != 0 && valued)
            cap__sig_route_undirect(&slot); /* taken back */
        return rc;
    }
    cap__thread *self = cap__current();
    if (t == self)
        cap__sig_deliver_pending(self, false, CAP__OWN_FREE);
    else
        bring(t, h, sig, restart);
    return 0;
}

int cap_thread_kill(cap_thread_t h, int sig)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    return send_to_thread(h, sig, NULL);
}

int cap_thread_sigqueue(cap_thread_t h, int sig, const union sigval value)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    /* What glibc's pthread_sigqueue gives the kernel. */
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = sig;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value = value;
    return send_to_thread(h, sig, &info);
}

/* SPDX-License-Identifier: MIT */
/*
 * Signals interrupting parked calls: the delivery ring, the registry of
 * interruptible calls and the dispatch that picks one of them per
 * delivery. The protocol and the choice of thread are in sigintr.h.
 *
 * Deliveries. cap__sig_begin, before the program's handler runs, numbers
 * the delivery with a fetch-add on `deliveries` and fills ring[seq % RING]
 * like a seqlock (stamp cleared, data, stamp = seq + 1 with release).
 * cap__sig_end, once the handler returned or a jump left it, records that
 * in the slot's `over` word and writes the eventfd. A dispatch walks the
 * numbers from `dispatched` up to `deliveries` in order and stops at a
 * slot whose stamp is still older (a handler between its fetch-add and
 * its stamp; its cap__sig_end brings dispatch back); a newer stamp means
 * the ring was lapped and that delivery is dropped (more than RING
 * signals between two dispatches). It handles a delivery once: the
 * slot's `done` says so. It leaves a delivery whose handler still runs
 * for later (the dispatch its cap__sig_end brings), unless a settling
 * call asked for it; `dispatched` stays below the first one left. A
 * delivery whose handler was left by a jump before anyone handled it
 * interrupts nothing.
 *
 * Dispatchers. The worker that harvests the eventfd (dispatch), and a
 * call that an event woke, when a delivery numbered before it resumed
 * was still undispatched (cap__sig_settle). Both run dispatch_some under
 * dispatch_lock, which publishes `dispatched` with release once every
 * delivery below it was handled: a settling call that reads it with
 * acquire sees the choices made for them.
 *
 * Registry: shards of waiting calls (sigintr.h), each a lock and two
 * lists in entry order (restartable calls, others). A call enters the
 * shard of the worker it runs on (the main thread its own), so entering
 * and leaving take a lock that only that worker's kernel thread takes
 * but for a dispatch or a call that leaves after migrating. Dispatch,
 * which is rare, holds every shard lock (in a fixed order; waiters never
 * hold two) while it chooses, so the calls it looks at cannot leave, and
 * runs the chosen call's callback under them; a callback that refuses
 * marks the call passed for this delivery and the choice starts again.
 */
#include "io/sigintr.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/ownfd.h"
#include "io/pipe.h"
#include "io/sigchld.h"
#include "io/sigdirect.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/spin.h"

enum { RING = 256 };

struct slot {
    _Atomic uint64_t stamp; /* seq + 1 once sig and restart are valid */
    _Atomic uint64_t over;  /* (seq + 1) << 1 | jumped, once the handler is over */
    uint64_t done;          /* [dispatch_lock] seq + 1 once a dispatch handled it */
    _Atomic int sig;
    _Atomic bool restart;
    _Atomic pid_t chld; /* the ended child a SIGCHLD is about, or 0 */
    /* Set by the handler: it jumped into this thread's frames, so its
     * call is the one to interrupt (cap__sig_force). */
    _Atomic(struct cap__thread *) force;
};

static struct slot ring[RING];
/* Handler side: deliveries numbered so far. Read (relaxed) by every
 * registered call an event woke, as it resumes (sigintr.h,
 * cap__sig_count), written only by handlers: a line of its own, so the
 * words dispatch and entering calls write never take it out of the
 * readers' caches. */
struct cap__sig_counter cap__sig_deliveries;
_Static_assert(sizeof cap__sig_deliveries == 64, "a line of its own");
/* [dispatch_lock] deliveries handled; stored with release, read racily
 * (acquire where the reader then looks at a choice). */
static _Atomic uint64_t dispatched;
static cap__spin dispatch_lock = CAP__SPIN_INIT; /* serialises dispatchers */
static _Atomic uint64_t tickets;
static atomic_int evfd = -1;

const cap__intr cap__intr_always = { .blocked = 0, .restart = false };
const cap__intr cap__intr_restart = { .blocked = 0, .restart = true };

uint64_t cap__sig_bits(const sigset_t *set)
{
    uint64_t b = 0; /* glibc's and the kernel's layout: bit sig-1 of the first word */
    memcpy(&b, set, sizeof b);
    return b;
}

/* ---- handler side ------------------------------------------------------ */

uint64_t cap__sig_begin(int sig, int sa_flags, pid_t chld)
{
    if (sig <= 0 || sig > 64)
        return 0;
    uint64_t seq = atomic_fetch_add(&cap__sig_deliveries.n, 1);
    struct slot *s = &ring[seq % RING];
    atomic_store_explicit(&s->stamp, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* the clear before the data */
    atomic_store_explicit(&s->sig, sig, memory_order_relaxed);
    atomic_store_explicit(&s->restart, (sa_flags & SA_RESTART) != 0, memory_order_relaxed);
    atomic_store_explicit(&s->chld, chld, memory_order_relaxed);
    atomic_store_explicit(&s->force, NULL, memory_order_relaxed);
    atomic_store_explicit(&s->stamp, seq + 1, memory_order_release);
    return seq + 1;
}

void cap__sig_force(uint64_t token, struct cap__thread *t)
{
    /* Published by cap__sig_end's release store of `over`. */
    atomic_store_explicit(&ring[(token - 1) % RING].force, t, memory_order_relaxed);
}

_Atomic _Bool cap__sig_work_left;

/* Has the worker that harvests the eventfd run a dispatch. */
static void bring_dispatch(void)
{
    int fd = atomic_load_explicit(&evfd, memory_order_acquire);
    if (fd >= 0) {
        int saved = errno;
        uint64_t one = 1;
        syscall(SYS_write, fd, &one, sizeof one);
        errno = saved;
    }
}

void cap__sig_end(uint64_t token, bool jumped)
{
    if (token == 0) {
        /* Not numbered: nothing to interrupt, but what the handler left
         * for the dispatch (util/sigctx.h) must still be run. */
        if (atomic_load_explicit(&cap__sig_work_left, memory_order_relaxed))
            bring_dispatch();
        return;
    }
    struct slot *s = &ring[(token - 1) % RING];
    /* Release: what the handler did comes before a waiter that sees the
     * delivery over returns EINTR (wait_over). Never over a newer
     * delivery's word (the ring lapped), nor twice (a nested handler's
     * jump may end this one between its end and its unlinking). */
    uint64_t want = token << 1 | (jumped ? 1 : 0);
    uint64_t cur = atomic_load_explicit(&s->over, memory_order_relaxed);
    while ((cur >> 1) < token &&
           !atomic_compare_exchange_weak_explicit(&s->over, &cur, want, memory_order_release,
                                                  memory_order_relaxed))
        ;
    bring_dispatch();
}

/* ---- before the first handler (sigintr.h) ------------------------------- */

enum { HANDLED_NONE, HANDLED_SWEEPING, HANDLED_YES };

_Atomic int cap__sig_handled;

void cap__sig_handler_coming(void)
{
    int expect = HANDLED_NONE;
    if (atomic_compare_exchange_strong(&cap__sig_handled, &expect, HANDLED_SWEEPING)) {
        cap__io_rewake_exclusive();
        cap__wait_rewake_unregistered(); /* semaphore waits (sched/park.h) */
        atomic_store(&cap__sig_handled, HANDLED_YES);
        return;
    }
    /* Another thread's sweep: our handler must not come before it ends. */
    while (atomic_load(&cap__sig_handled) != HANDLED_YES)
        cap__kernel_yield();
}

/* ---- registry ------------------------------------------------------------ */

enum { SHARDS = 64 };

struct cap__sig_list {
    cap__spin lock;
    cap__sig_waiter *head[2], *tail[2]; /* [lock] by kind: restartable, not */
} __attribute__((aligned(64)));

static struct cap__sig_list main_list;
static struct cap__sig_list shards[SHARDS];

/* The entry order of a call, for "the longest waiter first". With several
 * workers on x86-64, the time stamp counter (synchronised between CPUs,
 * and read without a bus lock): a shared counter took a locked add on a
 * line that every worker writes at every parking call, a transfer between
 * CPUs per call (60-780 ns on the development VM). With one worker only
 * that worker's kernel thread enters calls, so a plain increment does.
 * Calls entered within the counters' skew of each other may be ordered
 * either way, as they could be by the kernel. */
static inline uint64_t entry_ticket(void)
{
    if (cap__rt.nworkers > 1) {
#if defined(__x86_64__)
        return __builtin_ia32_rdtsc();
#else
        return atomic_fetch_add_explicit(&tickets, 1, memory_order_relaxed);
#endif
    }
    uint64_t t = atomic_load_explicit(&tickets, memory_order_relaxed);
    atomic_store_explicit(&tickets, t + 1, memory_order_relaxed);
    return t;
}

uint64_t cap__sig_ticket(void)
{
    /* With one worker a thread other than the worker's may race its
     * plain increment: a ticket equal to a call's, ordered before it,
     * which only gives that call the old treatment (io/sigchld.h). */
    return entry_ticket();
}

/* ---- the registry ------------------------------------------------------- */

/* A call entering with signals pending in its thread's own set
 * (io/sigdirect.h): one it takes (sigwait's) ends it; those its mask lets
 * through are delivered now, and one that interrupts this kind of call
 * does. */
static void enter_pending(cap__sig_waiter *sw, cap__thread *self)
{
    uint64_t takes = atomic_load(&self->sig_pending) & sw->in.takes;
    int sig = takes != 0 ? __builtin_ctzll(takes) + 1
                         : cap__sig_deliver_pending(self, sw->in.restart, CAP__OWN_IN_CALL);
    if (sig != 0 && atomic_load(&sw->sig) == 0) {
        atomic_store_explicit(&sw->hit, 0, memory_order_relaxed);
        atomic_store(&sw->sig, sig);
    }
}

void cap__sig_call_pending_slow(cap__sig_waiter *sw)
{
    enter_pending(sw, sw->thread);
}

void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, bool (*interrupt)(void *),
                    void *arg)
{
    cap__worker *w = cap__worker_self();
    cap__thread *self = w->current;
    sw->thread = self;
    sw->is_main = self->is_main;
    struct cap__sig_list *l = sw->is_main ? &main_list : &shards[w->id % SHARDS];
    sw->list = l;
    sw->in = *in;
    if (in->masked) /* the call's mask is its thread's while it waits */
        sw->mask_before = cap__sigmask_of(self);
    else
        sw->in.blocked |= cap__sigmask_of(self);
    sw->interrupt = interrupt;
    sw->arg = arg;
    sw->passed = 0;
    atomic_init(&sw->sig, 0);
    atomic_init(&sw->hit, 0);
    sw->ticket = entry_ticket();
    int k = !in->restart;
    sw->next = NULL;
    cap__spin_lock(&l->lock);
    /* Read under the lock: a dispatch that holds it either runs before we
     * are linked (and the delivery it handles was numbered before this
     * load, so it is not ours) or sees us. In entry order along the list:
     * appended under the lock that the load is made under. */
    sw->epoch = atomic_load(&cap__sig_deliveries.n);
    sw->prev = l->tail[k];
    if (sw->prev != NULL)
        sw->prev->next = sw;
    else
        l->head[k] = sw;
    l->tail[k] = sw;
    sw->outer = self->sig_call;
    self->sig_call = sw;
    /* A handler jumped into this thread (or ended it) and left the act to
     * its call (src/stack/signal.c): as its wait ended, before it
     * registers once more, or as it registers now. Looked at once the
     * call is published: until then a handler that interrupts the thread
     * finds no call and hands the act over (src/io/sigdirect.c,
     * cap__sig_pending_kicked), afterwards it finds this one. */
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&self->jump_due, memory_order_relaxed) != NULL, 0)) {
        uint64_t token = 0;
        int sig = cap__sig_jump_signal(self, &token);
        atomic_store_explicit(&sw->hit, token, memory_order_relaxed);
        atomic_store(&sw->sig, sig);
    }
    cap__spin_unlock(&l->lock);
    /* Registered first: a pending signal the new mask accepts is
     * delivered as it is installed, and interrupts this call. */
    if (in->masked) /* (and the signals the runtime kept, io/sigroute.h) */
        cap__sigmask_set(self, in->blocked);
    /* After the link, under the lock: a signal sent to this thread that
     * cap__sig_direct did not find the call for is seen here. */
    if (__builtin_expect(atomic_load(&self->sig_pending) != 0, 0))
        enter_pending(sw, self);
}

/* Whether the handler of delivery token (seq + 1) is over: returned, or
 * left by a jump; also once the ring has lapped its slot, when nothing
 * can tell any more. */
static bool delivery_over(uint64_t token)
{
    struct slot *s = &ring[(token - 1) % RING];
    return (atomic_load_explicit(&s->over, memory_order_acquire) >> 1) >= token ||
           atomic_load_explicit(&s->stamp, memory_order_relaxed) > token;
}

/* Waits until the handler of delivery token is over. It runs on another
 * kernel thread: on this one, a handler is over once ordinary code runs
 * again (a jump out of it ends it, cap__sig_handler_jump). Rarely needed
 * (only a call a dispatch chose while the handler still ran), and mostly
 * for a few microseconds, so a spin that lets the worker's other threads
 * and then the kernel's run. At most WAIT_OVER_NS: a handler left by a
 * way we do not see (setcontext, an exception) is never over, and the
 * call then returns EINTR after that long rather than never (one that
 * really runs longer sees its EINTR come before its end). */
enum { WAIT_OVER_NS = 1000 * 1000 * 1000 };

static void wait_over(uint64_t token)
{
    uint64_t give_up = 0;
    for (unsigned spins = 0; !delivery_over(token); spins++) {
        if (spins < 64) {
            cap__cpu_relax();
            continue;
        }
        if (give_up == 0)
            give_up = cap__now() + WAIT_OVER_NS;
        else if (spins % 64 == 0 && cap__now() > give_up)
            return;
        cap__thread *self = cap__current();
        if (self != NULL)
            cap__yield(self);
        cap__kernel_yield();
    }
}

int cap__sig_leave(cap__sig_waiter *sw)
{
    return cap__sig_leave_direct(sw, NULL);
}

/* The thread's own pending signals, delivered as a call leaves (under
 * the call's mask, then those only its mask held); returns one that
 * interrupts the call, or 0. */
static int leave_pending(cap__sig_waiter *sw)
{
    cap__thread *self = sw->thread;
    int direct = 0;
    if (atomic_load_explicit(&self->sig_pending, memory_order_relaxed) != 0)
        direct = cap__sig_deliver_pending(self, sw->in.restart, CAP__OWN_IN_CALL);
    if (sw->in.masked) { /* its thread's mask again */
        cap__sigmask_set(self, sw->mask_before);
        if (atomic_load_explicit(&self->sig_pending, memory_order_relaxed) != 0) {
            int more = cap__sig_deliver_pending(self, sw->in.restart, CAP__OWN_IN_CALL);
            if (more != 0)
                direct = more;
        }
    }
    return direct;
}

int cap__sig_leave_direct(cap__sig_waiter *sw, int *direct)
{
    struct cap__sig_list *l = sw->list;
    int k = !sw->in.restart;
    cap__spin_lock(&l->lock);
    if (sw->prev != NULL)
        sw->prev->next = sw->next;
    else
        l->head[k] = sw->next;
    if (sw->next != NULL)
        sw->next->prev = sw->prev;
    else
        l->tail[k] = sw->prev;
    sw->thread->sig_call = sw->outer;
    int sig = atomic_load_explicit(&sw->sig, memory_order_relaxed);
    uint64_t hit = atomic_load_explicit(&sw->hit, memory_order_relaxed);
    cap__spin_unlock(&l->lock);
    /* Signals sent to the thread: delivered before the call returns,
     * under the call's mask, and then those only its mask held. A jump
     * out of their handlers is made as the call returns (the call is
     * still in progress: io/sigdirect.h). */
    int d = leave_pending(sw);
    if (direct != NULL)
        *direct = d;
    if (sig != 0 && hit != 0)
        wait_over(hit); /* EINTR comes after the handler, as in Linux */
    return sig;
}

/* ---- dispatch (ordinary context, dispatch_lock held) ---------------------- */

struct pick {
    int sig;
    bool restart;
    uint64_t seq;
    uint64_t seen; /* a SIGCHLD about a child seen ended at this entry
                      ticket (io/sigchld.h): later calls never take it */
    cap__sig_waiter *best;
};

/* The first call of list k of l that may take p's delivery: the longest
 * waiter of the list, as the list is in entry order. */
static cap__sig_waiter *first_eligible(struct cap__sig_list *l, int k, const struct pick *p)
{
    for (cap__sig_waiter *sw = l->head[k]; sw != NULL; sw = sw->next) {
        if (sw->epoch > p->seq)
            return NULL; /* entered after the delivery, and so did the rest */
        if (p->seen != 0 && sw->ticket > p->seen)
            continue; /* entered after the signal was sent (io/sigchld.h) */
        if (atomic_load_explicit(&sw->sig, memory_order_relaxed) == 0 &&
            !(sw->in.blocked & (1ull << (p->sig - 1))) && sw->passed != p->seq + 1)
            return sw;
    }
    return NULL;
}

/* The main thread's call if one is eligible, else the longest waiter. */
static cap__sig_waiter *choose(const struct pick *p, int nshards)
{
    int kinds = p->restart ? 1 : 2; /* restartable lists (k 0) are restarted */
    for (int k = 2 - kinds; k < 2; k++) {
        cap__sig_waiter *sw = first_eligible(&main_list, k, p);
        if (sw != NULL)
            return sw;
    }
    cap__sig_waiter *best = NULL;
    for (int i = 0; i < nshards; i++)
        for (int k = 2 - kinds; k < 2; k++) {
            cap__sig_waiter *sw = first_eligible(&shards[i], k, p);
            if (sw != NULL && (best == NULL || sw->ticket < best->ticket))
                best = sw;
        }
    return best;
}

static void deliver(int sig, bool restart, uint64_t seq, uint64_t seen, int nshards)
{
    struct pick p = { .sig = sig, .restart = restart, .seq = seq, .seen = seen };
    cap__sig_waiter *sw;
    while ((sw = choose(&p, nshards)) != NULL) {
        /* Before the callback takes the wait structure's lock: the waiter
         * checks sig under that lock before it parks (sigintr.h), and a
         * callback of a woken parked-only call compares hit with the
         * count it took as it resumed. hit before sig:
         * cap__sig_hit_first reads them the other way round. */
        atomic_store_explicit(&sw->hit, seq + 1, memory_order_relaxed);
        atomic_store(&sw->sig, sig);
        if (sw->interrupt(sw->arg))
            return;
        atomic_store(&sw->sig, 0);
        sw->passed = seq + 1;
    }
}

/* The handler of delivery seq jumped into t's frames: t's call takes it,
 * whatever its flags and mask say, as the jump leaves the call. */
static void deliver_forced(int sig, uint64_t seq, cap__thread *t, int nshards)
{
    for (int i = -1; i < nshards; i++) {
        struct cap__sig_list *l = i < 0 ? &main_list : &shards[i];
        for (int k = 0; k < 2; k++) {
            for (cap__sig_waiter *sw = l->head[k]; sw != NULL; sw = sw->next) {
                /* Not a call entered after the delivery: t made the
                 * jump before this dispatch (the handler ran on t, inside
                 * an async-signal-safe call, io/sigsafe.h), and this is a
                 * later call, which the signal never came in. */
                if (sw->thread != t || sw->epoch > seq ||
                    atomic_load_explicit(&sw->sig, memory_order_relaxed) != 0)
                    continue;
                atomic_store_explicit(&sw->hit, seq + 1, memory_order_relaxed);
                atomic_store(&sw->sig, sig);
                if (sw->interrupt(sw->arg))
                    return;
                atomic_store(&sw->sig, 0);
            }
        }
    }
    /* None: t was woken and makes the jump as its call returns, or waits
     * where no signal interrupts it (a disk read), which ends by itself. */
}

static void lock_all(int nshards)
{
    cap__spin_lock(&main_list.lock);
    for (int i = 0; i < nshards; i++)
        cap__spin_lock(&shards[i].lock);
}

static void unlock_all(int nshards)
{
    for (int i = nshards; i-- > 0;)
        cap__spin_unlock(&shards[i].lock);
    cap__spin_unlock(&main_list.lock);
}

/* ---- routed signals (io/sigroute.h) -------------------------------------- */

/* A call of the lists that takes sig (a sigwait of it). */
static cap__sig_waiter *taker(int sig, int nshards)
{
    for (int i = -1; i < nshards; i++) {
        struct cap__sig_list *l = i < 0 ? &main_list : &shards[i];
        for (int k = 0; k < 2; k++)
            for (cap__sig_waiter *sw = l->head[k]; sw != NULL; sw = sw->next)
                if ((sw->in.takes & (UINT64_C(1) << (sig - 1))) &&
                    atomic_load_explicit(&sw->sig, memory_order_relaxed) == 0)
                    return sw;
    }
    return NULL;
}

cap__thread *cap__sig_route_pick(int sig, bool restart, cap_thread_t *h, bool *takes)
{
    int nshards = cap__rt.nworkers < SHARDS ? cap__rt.nworkers : SHARDS;
    /* Every call waiting now may take it: none entered after it. */
    struct pick p = { .sig = sig, .restart = restart, .seq = UINT64_MAX - 1 };
    lock_all(nshards);
    cap__sig_waiter *sw = choose(&p, nshards);
    *takes = false;
    if (sw == NULL && (sw = taker(sig, nshards)) != NULL)
        *takes = true;
    if (sw == NULL && restart) {
        p.restart = false; /* a restartable call: it runs the handler and goes on */
        sw = choose(&p, nshards);
    }
    cap__thread *t = sw != NULL ? sw->thread : NULL;
    if (t != NULL)
        *h = cap__thread_handle(t); /* t lives while its call is linked */
    unlock_all(nshards);
    return t;
}

/* ---- signals sent to one thread (io/sigdirect.h) ------------------------- */

enum cap__sig_direct_result cap__sig_direct(cap__thread *t, int sig, bool restart)
{
    uint64_t bit = UINT64_C(1) << (sig - 1);
    int nshards = cap__rt.nworkers < SHARDS ? cap__rt.nworkers : SHARDS;
    enum cap__sig_direct_result r = CAP__DIRECT_NONE;
    /* Outside dispatch_lock: a delivery's choice and this one take the
     * same shard locks, and each looks at sw->sig under them. */
    lock_all(nshards);
    cap__sig_waiter *sw = t->sig_call; /* written under its shard's lock */
    if (!(atomic_load(&t->sig_pending) & bit)) {
        /* Delivered or taken since the sender looked: perhaps as the
         * call it was sent in left, and sw is the thread's next call,
         * registered (under these locks) after the take. Marked now, that
         * call would fail with EINTR, and no handler run for it. */
        r = CAP__DIRECT_DONE;
    } else if (sw == NULL) {
        r = CAP__DIRECT_NONE;
    } else if (atomic_load_explicit(&sw->sig, memory_order_relaxed) != 0) {
        r = CAP__DIRECT_DONE; /* interrupted already: it delivers as it leaves */
    } else if (!(sw->in.takes & bit) && (sw->in.blocked & sw->in.wakes & bit)) {
        /* A poll of a signalfd of sig: it looks again and finds sig
         * pending there (a fire without a signal ends no call). */
        sw->interrupt(sw->arg);
        r = CAP__DIRECT_DONE;
    } else if (!(sw->in.takes & bit) && (sw->in.blocked & bit)) {
        r = CAP__DIRECT_HELD;
    } else if (!(sw->in.takes & bit) && restart && sw->in.restart) {
        /* Goes on after the handler: a descriptor wait (it tries its
         * transfer again and parks anew, delivering as it leaves and
         * enters), a semaphore wait (it delivers before it parks again,
         * sync/sem.c) and an offloaded call (it delivers and parks again
         * while its job goes on, io/offload.c) can be woken so. */
        if (sw->interrupt != cap__io_interrupt_excl && sw->interrupt != cap__wait_interrupt &&
            sw->interrupt != cap__offload_interrupt)
            r = CAP__DIRECT_HELD;
        else if (sw->interrupt(sw->arg))
            r = CAP__DIRECT_DONE;
    } else {
        atomic_store_explicit(&sw->hit, 0, memory_order_relaxed);
        atomic_store(&sw->sig, sig);
        if (sw->interrupt(sw->arg))
            r = CAP__DIRECT_DONE;
        else
            atomic_store(&sw->sig, 0);
    }
    unlock_all(nshards);
    return r;
}

/* Delivery seq, whose slot s is filled and not handled yet: interrupts
 * a call for it if its handler is over or seq is below early; false if
 * it is left for later (its handler still runs). */
static bool handle(struct slot *s, uint64_t seq, uint64_t early, int nshards, bool *locked)
{
    int sig = atomic_load_explicit(&s->sig, memory_order_relaxed);
    bool restart = atomic_load_explicit(&s->restart, memory_order_relaxed);
    pid_t chld = atomic_load_explicit(&s->chld, memory_order_relaxed);
    uint64_t over = atomic_load_explicit(&s->over, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire); /* the data before the re-check */
    if (atomic_load_explicit(&s->stamp, memory_order_relaxed) != seq + 1)
        return true; /* lapped meanwhile: lost */
    bool is_over = (over >> 1) == seq + 1;
    if (!is_over && seq >= early)
        return false;
    /* Left by a jump before anyone chose for it: the thread that ran the
     * handler took the signal, running (sigintr.h). */
    if (!(is_over && (over & 1))) {
        if (!*locked) {
            lock_all(nshards);
            *locked = true;
        }
        cap__thread *force = is_over ? atomic_load_explicit(&s->force, memory_order_relaxed)
                                     : NULL;
        if (force != NULL)
            deliver_forced(sig, seq, force, nshards);
        else
            deliver(sig, restart, seq, chld != 0 ? cap__sigchld_seen_at(chld) : 0, nshards);
    }
    if (chld != 0)
        cap__sigchld_forget(chld); /* its one SIGCHLD is in */
    s->done = seq + 1;
    return true;
}

/* Handles the deliveries from `dispatched` on, in number order, up to
 * the first slot still being filled: each whose handler is over, and
 * each numbered below early even if its handler still runs (a settling
 * call's). One left for later keeps `dispatched` below it; its
 * cap__sig_end brings a dispatch back. dispatch_lock held. */
static void dispatch_some(uint64_t early)
{
    uint64_t head = atomic_load(&cap__sig_deliveries.n);
    uint64_t seq = atomic_load_explicit(&dispatched, memory_order_relaxed);
    int nshards = cap__rt.nworkers < SHARDS ? cap__rt.nworkers : SHARDS;
    bool locked = false, all_before = true;
    if (head - seq > RING)
        seq = head - RING; /* lapped: the oldest are lost */
    uint64_t mark = seq;
    for (; seq < head; seq++) {
        struct slot *s = &ring[seq % RING];
        uint64_t st = atomic_load_explicit(&s->stamp, memory_order_acquire);
        if (st < seq + 1)
            break; /* still being written; its cap__sig_end writes the eventfd */
        bool handled = st > seq + 1 /* lapped: lost */ || s->done == seq + 1 ||
                       handle(s, seq, early, nshards, &locked);
        if (!handled)
            all_before = false;
        else if (all_before)
            mark = seq + 1;
    }
    if (locked)
        unlock_all(nshards);
    /* Release: a settling call that reads it with acquire sees what
     * deliver chose for every delivery below it. */
    atomic_store_explicit(&dispatched, mark, memory_order_release);
}

static void dispatch(void *arg)
{
    (void)arg;
    uint64_t v;
    syscall(SYS_read, atomic_load(&evfd), &v, sizeof v); /* drain: the next write is a new edge */
    /* Before the work: a handler that queues more after this sees the
     * flag clear and brings another dispatch (util/sigctx.h). */
    atomic_exchange(&cap__sig_work_left, false);
    cap__run_deferred_wakes(); /* what the handlers posted (sched/park.h) */
    cap__pipe_run_deferred();  /* and wrote to our pipes (io/pipe.h) */
    cap__fd_run_deferred();    /* and did to the descriptor table (io/fd.h) */
    cap__sig_run_deferred_sends(); /* and sent to threads (io/sigdirect.h) */
    cap__sig_run_routes(); /* and kept from threads that block them (io/sigroute.h) */
    cap__spin_lock(&dispatch_lock);
    dispatch_some(0);
    cap__spin_unlock(&dispatch_lock);
}

void cap__sig_settle_slow(uint64_t woke)
{
    /* Deliveries below woke are numbered, so their slots are filled or
     * about to be (a handler between its fetch-add and its stamp, on
     * another kernel thread): dispatch until they are all handled. */
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&dispatched, memory_order_acquire) >= woke)
            return;
        cap__spin_lock(&dispatch_lock);
        dispatch_some(woke);
        cap__spin_unlock(&dispatch_lock);
        if (atomic_load_explicit(&dispatched, memory_order_acquire) >= woke)
            return;
        if (spins < 64)
            cap__cpu_relax();
        else
            cap__kernel_yield();
    }
}

bool cap__sig_undispatched(void)
{
    return atomic_load_explicit(&cap__sig_deliveries.n, memory_order_relaxed) !=
           atomic_load_explicit(&dispatched, memory_order_relaxed);
}

void cap__sig_forked_begin(void)
{
    dispatch_lock = (cap__spin)CAP__SPIN_INIT;
    memset(&main_list, 0, sizeof main_list);
    memset(shards, 0, sizeof shards);
    /* The parent's deliveries not yet dispatched were the parent's. */
    atomic_store(&dispatched, atomic_load(&cap__sig_deliveries.n));
    cap__sig_routes_forked();
    /* A first-handler sweep another thread was making ended with that
     * thread: the child's one thread has nothing parked to sweep, and its
     * own sigaction would wait for the sweep's end for ever. */
    int sweeping = HANDLED_SWEEPING;
    atomic_compare_exchange_strong(&cap__sig_handled, &sweeping, HANDLED_YES);
}

void cap__sig_forked_end(void)
{
    cap__ownfd_close(atomic_exchange(&evfd, -1)); /* the parent's */
    cap__sig_start();
}

void cap__sig_start(void)
{
    int fd = (int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return; /* no EINTR for parked calls; they behave as with SA_RESTART */
    fd = cap__ownfd_adopt(fd);
    if (cap__io_watch(fd, dispatch, NULL) != 0)
        return; /* recorded as ours: kept open, unused */
    atomic_store_explicit(&evfd, fd, memory_order_release);
    if (atomic_load(&cap__sig_deliveries.n) != 0 || atomic_load(&cap__sig_work_left)) {
        /* Handlers ran before (or left work, the flag a fork's child
         * inherits): a dispatch catches up, so that neither
         * cap__sig_undispatched nor the flag stays true (the flag sends
         * every switch through the scheduler, sched/worker.c). */
        uint64_t one = 1;
        syscall(SYS_write, fd, &one, sizeof one);
    }
}

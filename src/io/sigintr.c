/* SPDX-License-Identifier: MIT */
/*
 * Signals interrupting parked calls: the delivery ring, the registry of
 * interruptible calls and the dispatch that picks one of them per
 * delivery. The protocol and the choice of thread are in sigintr.h.
 *
 * Deliveries. cap__sig_caught numbers each delivery with a fetch-add on
 * `deliveries` and fills ring[seq % RING] like a seqlock (stamp cleared,
 * data, stamp = seq + 1 with release), then writes the eventfd. Dispatch
 * handles numbers from `dispatched` up to `deliveries`; a slot whose stamp
 * is still older belongs to a handler that has not finished writing it
 * (that handler's eventfd write will bring dispatch back), a newer stamp
 * means the ring was lapped and that delivery is dropped (more than RING
 * signals between two dispatches).
 *
 * Registry. Each thread links its interruptible calls to its own TCB
 * (sig_call, under the TCB's sig_lock): entering and leaving touch only
 * the thread's own TCB and the waiter on its own stack, one uncontended
 * lock each, where a shared list also wrote the neighbouring entries
 * (other threads' stacks, cache misses on another CPU's lines). Dispatch,
 * which is rare, walks every TCB under the dispatch lock, taking each
 * sig_lock in turn, and the descriptor table for parked-only calls
 * (sigintr.h; io/wait.c), and then delivers to the call it chose under
 * the lock it found it under, after checking that the call is still there
 * and still eligible (else it chooses again).
 */
#include "io/sigintr.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/ownfd.h"
#include "io/pipe.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/spin.h"

enum { RING = 256 };

struct slot {
    _Atomic uint64_t stamp; /* seq + 1 once sig and restart are valid */
    _Atomic int sig;
    _Atomic bool restart;
};

static struct slot ring[RING];
static _Atomic uint64_t deliveries;  /* handler side: deliveries numbered so far */
static cap__spin dispatch_lock = CAP__SPIN_INIT; /* serialises dispatchers */
static uint64_t dispatched;          /* [dispatch_lock] deliveries handled */
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

void cap__sig_caught(int sig, int sa_flags)
{
    if (sig <= 0 || sig > 64)
        return;
    int saved = errno;
    uint64_t seq = atomic_fetch_add(&deliveries, 1);
    struct slot *s = &ring[seq % RING];
    atomic_store_explicit(&s->stamp, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* the clear before the data */
    atomic_store_explicit(&s->sig, sig, memory_order_relaxed);
    atomic_store_explicit(&s->restart, (sa_flags & SA_RESTART) != 0, memory_order_relaxed);
    atomic_store_explicit(&s->stamp, seq + 1, memory_order_release);
    int fd = atomic_load_explicit(&evfd, memory_order_acquire);
    if (fd >= 0) {
        uint64_t one = 1;
        syscall(SYS_write, fd, &one, sizeof one);
    }
    errno = saved;
}

/* ---- registry ------------------------------------------------------------ */

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

void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, void (*interrupt)(void *),
                    void *arg)
{
    cap__thread *self = cap__current();
    sw->thread = self;
    sw->in = *in;
    sw->interrupt = interrupt;
    sw->arg = arg;
    atomic_init(&sw->sig, 0);
    sw->ticket = entry_ticket();
    cap__spin_lock(&self->sig_lock);
    /* Read under the lock: a dispatch that holds it either runs before we
     * are linked (and the delivery it handles was numbered before this
     * load, so it is not ours) or sees us. */
    sw->epoch = atomic_load(&deliveries);
    sw->outer = self->sig_call;
    self->sig_call = sw;
    cap__spin_unlock(&self->sig_lock);
}

int cap__sig_leave(cap__sig_waiter *sw)
{
    cap__thread *t = sw->thread;
    cap__spin_lock(&t->sig_lock);
    cap__sig_waiter **pp = &t->sig_call;
    while (*pp != sw) /* the innermost but for a call left out of order */
        pp = &(*pp)->outer;
    *pp = sw->outer;
    cap__spin_unlock(&t->sig_lock);
    return atomic_load(&sw->sig);
}

void cap__sig_stamp(uint64_t *epoch, uint64_t *ticket)
{
    /* Under the descriptor's lock, which dispatch takes to look at the
     * waiter: as for cap__sig_enter, a delivery that dispatch handles
     * before seeing the waiter was numbered before this load. */
    *epoch = atomic_load(&deliveries);
    *ticket = entry_ticket();
}

/* ---- dispatch (ordinary context, dispatch_lock held) ---------------------- */

static bool eligible(const cap__sig_waiter *sw, const cap__sig_pick *p)
{
    return atomic_load_explicit(&sw->sig, memory_order_relaxed) == 0 &&
           cap__sig_eligible(&sw->in, sw->epoch, p);
}

static void consider(cap__thread *t, void *arg)
{
    cap__sig_pick *p = arg;
    cap__spin_lock(&t->sig_lock);
    for (const cap__sig_waiter *sw = t->sig_call; sw != NULL; sw = sw->outer)
        if (eligible(sw, p) && cap__sig_better(p, t->is_main, sw->ticket)) {
            p->found = true;
            p->is_main = t->is_main;
            p->ticket = sw->ticket;
            p->rec = sw;
            p->t = t;
            p->f = NULL;
        }
    cap__spin_unlock(&t->sig_lock);
}

/* Interrupts p's registered call if it is still linked and eligible;
 * false if it left meanwhile. A call entered since at the same address is
 * not eligible: its epoch is past seq. */
static bool interrupt_registered(const cap__sig_pick *p)
{
    bool done = false;
    cap__spin_lock(&p->t->sig_lock);
    for (cap__sig_waiter *sw = p->t->sig_call; sw != NULL; sw = sw->outer)
        if (sw == p->rec) {
            if (eligible(sw, p)) {
                /* Before the callback takes the wait structure's lock: the
                 * waiter checks sig under that lock before it parks
                 * (sigintr.h). */
                atomic_store(&sw->sig, p->sig);
                sw->interrupt(sw->arg);
                done = true;
            }
            break;
        }
    cap__spin_unlock(&p->t->sig_lock);
    return done;
}

static void deliver(int sig, bool restart, uint64_t seq)
{
    for (;;) {
        cap__sig_pick p = { .sig = sig, .restart = restart, .seq = seq };
        cap__thread_foreach(consider, &p);
        cap__io_sig_scan(&p);
        if (!p.found)
            return;
        if (p.f != NULL ? cap__io_sig_interrupt(&p) : interrupt_registered(&p))
            return;
    }
}

static void dispatch(void *arg)
{
    (void)arg;
    uint64_t v;
    syscall(SYS_read, atomic_load(&evfd), &v, sizeof v); /* drain: the next write is a new edge */
    cap__run_deferred_wakes(); /* what the handlers posted (sched/park.h) */
    cap__pipe_run_deferred();  /* and wrote to our pipes (io/pipe.h) */
    cap__spin_lock(&dispatch_lock);
    uint64_t head = atomic_load(&deliveries);
    uint64_t seq = dispatched;
    if (head - seq > RING)
        seq = head - RING; /* lapped: the oldest are lost */
    for (; seq < head; seq++) {
        struct slot *s = &ring[seq % RING];
        uint64_t st = atomic_load_explicit(&s->stamp, memory_order_acquire);
        if (st < seq + 1)
            break; /* still being written; its handler will write the eventfd */
        if (st > seq + 1)
            continue;
        int sig = atomic_load_explicit(&s->sig, memory_order_relaxed);
        bool restart = atomic_load_explicit(&s->restart, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire); /* the data before the re-check */
        if (atomic_load_explicit(&s->stamp, memory_order_relaxed) != seq + 1)
            continue;
        deliver(sig, restart, seq);
    }
    dispatched = seq;
    cap__spin_unlock(&dispatch_lock);
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
}

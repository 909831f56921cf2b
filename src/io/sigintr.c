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
static _Atomic uint64_t dispatched; /* [dispatch_lock] deliveries handled; read racily */
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
        sched_yield();
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

void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, bool (*interrupt)(void *),
                    void *arg)
{
    cap__worker *w = cap__worker_self();
    sw->is_main = w->current->is_main;
    struct cap__sig_list *l = sw->is_main ? &main_list : &shards[w->id % SHARDS];
    sw->list = l;
    sw->in = *in;
    sw->interrupt = interrupt;
    sw->arg = arg;
    sw->passed = 0;
    atomic_init(&sw->sig, 0);
    sw->ticket = entry_ticket();
    int k = !in->restart;
    sw->next = NULL;
    cap__spin_lock(&l->lock);
    /* Read under the lock: a dispatch that holds it either runs before we
     * are linked (and the delivery it handles was numbered before this
     * load, so it is not ours) or sees us. In entry order along the list:
     * appended under the lock that the load is made under. */
    sw->epoch = atomic_load(&deliveries);
    sw->prev = l->tail[k];
    if (sw->prev != NULL)
        sw->prev->next = sw;
    else
        l->head[k] = sw;
    l->tail[k] = sw;
    cap__spin_unlock(&l->lock);
}

int cap__sig_leave(cap__sig_waiter *sw)
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
    int sig = atomic_load_explicit(&sw->sig, memory_order_relaxed);
    cap__spin_unlock(&l->lock);
    return sig;
}

/* ---- dispatch (ordinary context, dispatch_lock held) ---------------------- */

struct pick {
    int sig;
    bool restart;
    uint64_t seq;
    cap__sig_waiter *best;
};

/* The first call of list k of l that may take p's delivery: the longest
 * waiter of the list, as the list is in entry order. */
static cap__sig_waiter *first_eligible(struct cap__sig_list *l, int k, const struct pick *p)
{
    for (cap__sig_waiter *sw = l->head[k]; sw != NULL; sw = sw->next) {
        if (sw->epoch > p->seq)
            return NULL; /* entered after the delivery, and so did the rest */
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

static void deliver(int sig, bool restart, uint64_t seq, int nshards)
{
    struct pick p = { .sig = sig, .restart = restart, .seq = seq };
    cap__sig_waiter *sw;
    while ((sw = choose(&p, nshards)) != NULL) {
        /* Before the callback takes the wait structure's lock: the waiter
         * checks sig under that lock before it parks (sigintr.h). */
        atomic_store(&sw->sig, sig);
        if (sw->interrupt(sw->arg))
            return;
        atomic_store(&sw->sig, 0);
        sw->passed = seq + 1;
    }
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

static void dispatch(void *arg)
{
    (void)arg;
    uint64_t v;
    syscall(SYS_read, atomic_load(&evfd), &v, sizeof v); /* drain: the next write is a new edge */
    cap__run_deferred_wakes(); /* what the handlers posted (sched/park.h) */
    cap__pipe_run_deferred();  /* and wrote to our pipes (io/pipe.h) */
    cap__fd_run_deferred();    /* and did to the descriptor table (io/fd.h) */
    cap__spin_lock(&dispatch_lock);
    uint64_t head = atomic_load(&deliveries);
    uint64_t seq = atomic_load_explicit(&dispatched, memory_order_relaxed);
    int nshards = cap__rt.nworkers < SHARDS ? cap__rt.nworkers : SHARDS;
    bool locked = false;
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
        if (!locked) {
            lock_all(nshards);
            locked = true;
        }
        deliver(sig, restart, seq, nshards);
    }
    if (locked)
        unlock_all(nshards);
    atomic_store_explicit(&dispatched, seq, memory_order_relaxed);
    cap__spin_unlock(&dispatch_lock);
}

bool cap__sig_undispatched(void)
{
    return atomic_load_explicit(&deliveries, memory_order_relaxed) !=
           atomic_load_explicit(&dispatched, memory_order_relaxed);
}

void cap__sig_forked_begin(void)
{
    dispatch_lock = (cap__spin)CAP__SPIN_INIT;
    memset(&main_list, 0, sizeof main_list);
    memset(shards, 0, sizeof shards);
    /* The parent's deliveries not yet dispatched were the parent's. */
    atomic_store(&dispatched, atomic_load(&deliveries));
    /* A first-handler sweep another thread was making ended with that
     * thread: the child's one thread has nothing parked to sweep, and its
     * own sigaction would wait for the sweep's end for ever. */
    int sweeping = HANDLED_SWEEPING;
    atomic_compare_exchange_strong(&cap__sig_handled, &sweeping, HANDLED_YES);
}

void cap__sig_forked_end(void)
{
    atomic_store(&evfd, -1);
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
    if (atomic_load(&deliveries) != 0) {
        /* Handlers ran before: a dispatch catches up, so that
         * cap__sig_undispatched does not stay true. */
        uint64_t one = 1;
        syscall(SYS_write, fd, &one, sizeof one);
    }
}

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
 * Registry. Interruptible calls are linked in shards (by worker) so that
 * entering and leaving costs one uncontended lock on the common path;
 * dispatch, which is rare, takes every shard lock in index order, which
 * also serialises dispatchers.
 */
#include "io/sigintr.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/ownfd.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/spin.h"

enum { NSHARDS = 16, RING = 256 };

struct cap__sig_shard {
    cap__spin lock;
    cap__sig_waiter *head, *tail; /* [lock] in order of entry */
} __attribute__((aligned(64)));

struct slot {
    _Atomic uint64_t stamp; /* seq + 1 once sig and restart are valid */
    _Atomic int sig;
    _Atomic bool restart;
};

static struct cap__sig_shard shards[NSHARDS];
static struct slot ring[RING];
static _Atomic uint64_t deliveries;  /* handler side: deliveries numbered so far */
static uint64_t dispatched;          /* [every shard lock] deliveries handled */
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
 * and read without a bus lock): the shared counter took a locked add on a
 * line that every worker writes at every parking call, a transfer between
 * CPUs per call (60-780 ns on the development VM). With one worker the
 * line stays put and the add is cheaper than the counter read (2 against
 * 10 ns here). Calls entered within the counters' skew of each other may
 * be ordered either way, as they could be by the kernel. */
static inline uint64_t entry_ticket(void)
{
#if defined(__x86_64__)
    if (cap__rt.nworkers > 1)
        return __builtin_ia32_rdtsc();
#endif
    return atomic_fetch_add_explicit(&tickets, 1, memory_order_relaxed);
}

void cap__sig_enter(cap__sig_waiter *sw, const cap__intr *in, void (*interrupt)(void *),
                    void *arg)
{
    cap__thread *self = cap__current();
    int id = self->worker != NULL ? self->worker->id : 0;
    struct cap__sig_shard *s = &shards[(unsigned)id % NSHARDS];
    sw->shard = s;
    sw->thread = self;
    sw->in = *in;
    sw->interrupt = interrupt;
    sw->arg = arg;
    atomic_init(&sw->sig, 0);
    sw->ticket = entry_ticket();
    cap__spin_lock(&s->lock);
    /* Read under the lock: a dispatch that holds it either runs before we
     * are linked (and the delivery it handles was numbered before this
     * load, so it is not ours) or sees us. */
    sw->epoch = atomic_load(&deliveries);
    sw->next = NULL;
    sw->prev = s->tail;
    if (s->tail != NULL)
        s->tail->next = sw;
    else
        s->head = sw;
    s->tail = sw;
    cap__spin_unlock(&s->lock);
}

int cap__sig_leave(cap__sig_waiter *sw)
{
    struct cap__sig_shard *s = sw->shard;
    cap__spin_lock(&s->lock);
    if (sw->prev != NULL)
        sw->prev->next = sw->next;
    else
        s->head = sw->next;
    if (sw->next != NULL)
        sw->next->prev = sw->prev;
    else
        s->tail = sw->prev;
    cap__spin_unlock(&s->lock);
    return atomic_load(&sw->sig);
}

/* ---- dispatch (ordinary context, every shard lock held) ------------------- */

static bool eligible(const cap__sig_waiter *sw, int sig, bool restart, uint64_t seq)
{
    return sw->epoch <= seq && atomic_load_explicit(&sw->sig, memory_order_relaxed) == 0 &&
           !(sw->in.blocked & (1ull << (sig - 1))) && !(sw->in.restart && restart);
}

/* Main thread first, then the longest waiter. */
static bool better(const cap__sig_waiter *a, const cap__sig_waiter *b)
{
    if (b == NULL)
        return true;
    if (a->thread->is_main != b->thread->is_main)
        return a->thread->is_main;
    return a->ticket < b->ticket;
}

static void deliver(int sig, bool restart, uint64_t seq)
{
    cap__sig_waiter *best = NULL;
    for (int i = 0; i < NSHARDS; i++)
        for (cap__sig_waiter *sw = shards[i].head; sw != NULL; sw = sw->next)
            if (eligible(sw, sig, restart, seq) && better(sw, best))
                best = sw;
    if (best == NULL)
        return;
    /* Before the callback takes the wait structure's lock: the waiter
     * checks sig under that lock before it parks (sigintr.h). */
    atomic_store(&best->sig, sig);
    best->interrupt(best->arg);
}

static void dispatch(void *arg)
{
    (void)arg;
    uint64_t v;
    syscall(SYS_read, atomic_load(&evfd), &v, sizeof v); /* drain: the next write is a new edge */
    for (int i = 0; i < NSHARDS; i++)
        cap__spin_lock(&shards[i].lock);
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
    for (int i = NSHARDS - 1; i >= 0; i--)
        cap__spin_unlock(&shards[i].lock);
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

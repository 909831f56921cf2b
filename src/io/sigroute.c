/* SPDX-License-Identifier: MIT */
/*
 * Process-directed signals that reached a user thread blocking them: the
 * route slots and their dispatch. The protocol is in sigroute.h.
 *
 * Invariants: a slot moves free -> filling -> ready -> picking ->
 * handed -> free, each step a compare-and-swap of its word. The
 * trampoline fills; one picker picks (a dispatch, or a thread that
 * unblocks the signal or sigwaits for it, which takes it: picking ->
 * free; with no taker, picking -> ready); a handed slot is freed by its
 * claim, or goes back when its thread blocks the signal or ends before
 * taking it: handed -> ready by that thread or a dispatch's sweep,
 * handed -> picking by its router, whichever sees it first. sig and info
 * are written only while filling, t and h only while picking; readers
 * load the word with acquire first. cap__sig_routes_handed counts handed
 * slots.
 *
 * Directed slots (pthread_sigqueue's values, cap__sig_route_reserve) go
 * free -> filling -> handed -> free: filled and handed by their sender
 * (filling -> free if it could not send), freed by their claim, by the
 * sender (the signal was not left pending), or when their thread ends;
 * never ready (they are not the process's).
 * seq orders handed slots: a claim takes the oldest of its signal.
 */
#include "io/sigroute.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capriccio.h"
#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "io/sigmask.h"
#include "util/sigctx.h"

enum { ROUTE_SLOTS = 256, RT_FIRST = 34 };
enum { FREE, FILLING, READY, PICKING, HANDED };

static struct route {
    /* The state in the low 3 bits, a count of its steps above them: a
     * compare-and-swap never takes a slot that left and came back to the
     * state it was seen in (another signal, another thread). */
    _Atomic uint64_t word;
    int sig;
    siginfo_t info;
    cap__thread *t; /* handed: to whom, */
    cap_thread_t h; /* and its handle then */
    uint64_t seq;   /* handed: when (route_seq) */
    bool directed;  /* a thread's own (pthread_sigqueue), not the process's */
} routes[ROUTE_SLOTS];

static _Atomic uint64_t route_seq;

_Atomic int cap__sig_routes_handed;
_Atomic int cap__sig_routes_used;

static uint64_t bit(int sig)
{
    return UINT64_C(1) << (sig - 1);
}

static int state_of(uint64_t word)
{
    return (int)(word & 7);
}

static uint64_t load(struct route *r)
{
    return atomic_load_explicit(&r->word, memory_order_acquire);
}

/* The slot from word (as loaded) to state `to`; false if it moved. */
static bool step(struct route *r, uint64_t *word, int to)
{
    uint64_t next = ((*word >> 3) + 1) << 3 | (uint64_t)to;
    if (!atomic_compare_exchange_strong(&r->word, word, next))
        return false;
    *word = next;
    return true;
}

/* A free slot, moved to filling (its word in *w) and filled with sig and
 * info; NULL if none was free. */
static struct route *fill(int sig, const siginfo_t *info, bool directed, uint64_t *w)
{
    for (int i = 0; i < ROUTE_SLOTS; i++) {
        struct route *r = &routes[i];
        *w = load(r);
        if (state_of(*w) != FREE || !step(r, w, FILLING))
            continue;
        atomic_fetch_add(&cap__sig_routes_used, 1);
        r->sig = sig;
        r->info = *info;
        r->directed = directed;
        return r;
    }
    return NULL;
}

bool cap__sig_route_away(int sig, const siginfo_t *info)
{
    uint64_t w;
    struct route *r = fill(sig, info, false, &w);
    if (r == NULL)
        return false;
    step(r, &w, READY); /* only this kernel thread moves a filling slot */
    cap__sig_note_work_left();
    cap__sig_end(0, false); /* not numbered: brings the dispatch */
    return true;
}

uint64_t cap__sig_routes_ready_slow(void)
{
    uint64_t set = 0;
    for (int i = 0; i < ROUTE_SLOTS; i++)
        if (state_of(load(&routes[i])) == READY)
            set |= bit(routes[i].sig);
    return set;
}

/* One more thread that accepts sig, for cap__thread_foreach: main first. */
struct any_taker {
    int sig;
    cap__thread *found;
};

static void find_taker(cap__thread *t, void *arg)
{
    struct any_taker *a = arg;
    if (atomic_load(&t->state) == CAP__T_EXITED || atomic_load(&t->sig_closed) ||
        (cap__sigmask_of(t) & bit(a->sig)))
        return;
    if (a->found == NULL || (t->is_main && !a->found->is_main))
        a->found = t;
}

/* Hands slot r, picking (or filling, a directed one) at word w, to t
 * (handle h). */
static void hand(struct route *r, uint64_t *w, cap__thread *t, cap_thread_t h)
{
    r->t = t;
    r->h = h;
    r->seq = atomic_fetch_add(&route_seq, 1);
    atomic_fetch_add(&cap__sig_routes_handed, 1);
    step(r, w, HANDED); /* only its picker moves a picking slot */
}

/* Frees slot r, handed at word w, unless a claim did. */
static void unhand(struct route *r, uint64_t *w)
{
    if (step(r, w, FREE)) {
        atomic_fetch_sub(&cap__sig_routes_handed, 1);
        atomic_fetch_sub(&cap__sig_routes_used, 1);
    }
}

bool cap__sig_route_reserve(int sig, const siginfo_t *info, struct cap__sig_slot *slot)
{
    struct route *r = fill(sig, info, true, &slot->word);
    if (r == NULL)
        return false;
    slot->index = (int)(r - routes);
    return true;
}

void cap__sig_route_release(struct cap__sig_slot *slot)
{
    struct route *r = &routes[slot->index];
    step(r, &slot->word, FREE); /* only its filler moves a filling slot */
    atomic_fetch_sub(&cap__sig_routes_used, 1);
}

void cap__sig_route_hand(struct cap__sig_slot *slot, cap__thread *t, cap_thread_t h)
{
    hand(&routes[slot->index], &slot->word, t, h); /* only its filler moves a filling slot */
}

void cap__sig_route_undirect(const struct cap__sig_slot *slot)
{
    /* From the word it was handed at, a copy: a failed step loads the
     * slot's word into its argument, which may by then be another
     * sender's handed slot; so a second call never frees that one. */
    uint64_t w = slot->word;
    unhand(&routes[slot->index], &w);
}

/* Slot r, handed at word w, goes back to the process: ready, and a
 * dispatch brought for it; false if a claim or another giver was first. */
static bool give_back(struct route *r, uint64_t *w)
{
    if (!step(r, w, READY))
        return false;
    atomic_fetch_sub(&cap__sig_routes_handed, 1);
    cap__sig_note_work_left();
    cap__sig_end(0, false);
    return true;
}

/* Whether t, to which sig was handed, can no longer take it: it blocks
 * it (unless it was picked in a sigwait of it, which blocks what it
 * takes), or it is ending. */
static bool refuses(cap__thread *t, int sig, bool takes)
{
    return (!takes && (cap__sigmask_of(t) & bit(sig))) || atomic_load(&t->sig_closed);
}

/* Sends slot r (picking at word w) to a thread that accepts its signal;
 * back to ready if none does. */
static void route(struct route *r, uint64_t w)
{
    int flags = 0;
    enum cap__sig_disp disp = cap__sig_disposition(r->sig, &flags);
    for (int tries = 0; tries < 8; tries++) {
        cap_thread_t h = 0;
        bool takes = false;
        cap__thread *t = cap__sig_route_pick(r->sig, (flags & SA_RESTART) != 0, &h, &takes);
        if (t == NULL) {
            /* No parked call takes it: the rest of the threads. */
            struct any_taker a = { .sig = r->sig };
            cap__thread_foreach(find_taker, &a);
            if (a.found == NULL)
                break;
            t = a.found;
            h = cap__thread_handle(t);
        }
        int sig = r->sig;
        hand(r, &w, t, h);
        int rc = cap_thread_kill(h, sig);
        if (rc == 0) {
            /* Ignored now, or a default action taken already: no delivery
             * comes to claim it. */
            if (disp != CAP__DISP_HANDLER && !(atomic_load(&t->sig_pending) & bit(sig))) {
                unhand(r, &w);
                return;
            }
            /* t blocked it, or began to end, since the pick: whichever of
             * t (cap__sig_routes_blocked, _closing) and this sees the
             * other (the record, then the look; the change, then its
             * look: sequentially consistent) takes it back. An ended t
             * dropped the record: nothing to take. */
            if (refuses(t, sig, takes) &&
                (cap__sig_take_one(t, sig) || cap__thread_handle(t) != h ||
                 atomic_load(&t->state) == CAP__T_EXITED)) {
                if (!step(r, &w, PICKING))
                    return; /* t delivered it, or gave it back, meanwhile */
                atomic_fetch_sub(&cap__sig_routes_handed, 1);
                continue;
            }
            return;
        }
        /* Not sent; but a delivery of the same signal to t may have
         * claimed it meanwhile (sigroute.h: merged). */
        if (!step(r, &w, PICKING))
            return;
        atomic_fetch_sub(&cap__sig_routes_handed, 1);
        if (rc != ESRCH)
            break; /* EAGAIN (t has 255 instances queued): a later dispatch */
    }
    step(r, &w, READY);
}

void cap__sig_run_routes_slow(void)
{
    for (int i = 0; i < ROUTE_SLOTS; i++) {
        struct route *r = &routes[i];
        uint64_t w = load(r);
        if (state_of(w) == READY && step(r, &w, PICKING))
            route(r, w);
        else if (state_of(w) == HANDED && cap__thread_handle(r->t) != r->h) {
            /* Its thread ended before it took it. */
            if (r->directed)
                unhand(r, &w);
            else
                give_back(r, &w);
        }
    }
}

/* The oldest slot handed to self for sig (its word in *w), or NULL. */
static struct route *oldest_handed(cap__thread *self, int sig, uint64_t *w)
{
    struct route *found = NULL;
    for (int i = 0; i < ROUTE_SLOTS; i++) {
        struct route *r = &routes[i];
        uint64_t word = load(r);
        if (state_of(word) != HANDED || r->t != self || r->sig != sig)
            continue;
        if (found == NULL || r->seq < found->seq) {
            found = r;
            *w = word;
        }
    }
    return found;
}

/* The oldest handed slot's siginfo is the delivery's: the first sent of a
 * real-time signal's queue (FIFO, as sigqueue's), and for a standard
 * signal the first of those merged into its one instance (the kernel
 * keeps the first's siginfo too), all of which the delivery frees. */
bool cap__sig_route_claim_slow(cap__thread *self, int sig, siginfo_t *info)
{
    bool claimed = false;
    struct route *r;
    uint64_t w;
    while ((r = oldest_handed(self, sig, &w)) != NULL) {
        siginfo_t kept = r->info;
        if (!step(r, &w, FREE))
            continue; /* claimed or given back meanwhile: look again */
        atomic_fetch_sub(&cap__sig_routes_handed, 1);
        atomic_fetch_sub(&cap__sig_routes_used, 1);
        if (!claimed && info != NULL)
            *info = kept;
        claimed = true;
        if (sig >= RT_FIRST)
            break; /* one instance per delivery */
    }
    return claimed;
}

/* Whether a directed slot of sig is handed to self. */
static bool directed_handed(cap__thread *self, int sig)
{
    for (int i = 0; i < ROUTE_SLOTS; i++) {
        struct route *r = &routes[i];
        if (state_of(load(r)) == HANDED && r->directed && r->t == self && r->sig == sig)
            return true;
    }
    return false;
}

void cap__sig_routes_blocked(cap__thread *self, uint64_t blocked)
{
    if (atomic_load(&cap__sig_routes_handed) == 0)
        return;
    bool ending = atomic_load(&self->sig_closed);
    for (int i = 0; i < ROUTE_SLOTS; i++) {
        struct route *r = &routes[i];
        uint64_t w = load(r);
        if (state_of(w) != HANDED || r->t != self || !(blocked & bit(r->sig)))
            continue;
        if (r->directed) {
            /* The thread's own: it stays pending while blocked, and is
             * dropped with the thread's other pending signals as it ends. */
            if (ending)
                unhand(r, &w);
            continue;
        }
        /* A standard signal's one instance that is also the thread's own
         * (pthread_sigqueue, merged with this one) stays; the process's
         * goes back without taking it. */
        if (r->sig < RT_FIRST && !ending && directed_handed(self, r->sig)) {
            give_back(r, &w);
            continue;
        }
        if (cap__sig_take_one(self, r->sig) && !give_back(r, &w))
            cap__sig_post_own(self, r->sig); /* claimed meanwhile: undo the take */
    }
}

/* The next ready slot from *i on whose signal is in set, moved to
 * picking (its word in *w), or NULL. */
static struct route *pick_ready(uint64_t set, int *i, uint64_t *w)
{
    if ((cap__sig_routes_ready() & set) == 0)
        return NULL; /* (one load when no slot is used) */
    for (; *i < ROUTE_SLOTS; (*i)++) {
        struct route *r = &routes[*i];
        *w = load(r);
        if (state_of(*w) == READY && (set & bit(r->sig)) && step(r, w, PICKING))
            return r;
    }
    return NULL;
}

void cap__sig_routes_merge_kernel(uint64_t unblocked)
{
    uint64_t standard = (UINT64_C(1) << (RT_FIRST - 1)) - 1;
    uint64_t ready = cap__sig_routes_ready() & unblocked & standard;
    if (ready == 0)
        return; /* (one load when no slot is used) */
    uint64_t pending = 0;
    if (syscall(SYS_rt_sigpending, &pending, sizeof pending) != 0)
        return;
    for (int sig = 1; sig < RT_FIRST; sig++) {
        if (!(ready & pending & bit(sig)))
            continue;
        uint64_t one = bit(sig);
        struct timespec zero = { 0, 0 };
        syscall(SYS_rt_sigtimedwait, &one, NULL, &zero, sizeof one);
    }
}

void cap__sig_routes_unblocked(cap__thread *self, uint64_t unblocked)
{
    cap_thread_t h = cap__thread_handle(self);
    uint64_t w;
    struct route *r;
    for (int i = 0; (r = pick_ready(unblocked, &i, &w)) != NULL; i++) {
        int sig = r->sig;
        hand(r, &w, self, h);
        cap__sig_post_own(self, sig);
    }
}

int cap__sig_route_take(uint64_t set, siginfo_t *info)
{
    int i = 0;
    uint64_t w;
    struct route *r = pick_ready(set, &i, &w);
    if (r == NULL)
        return 0;
    int sig = r->sig;
    if (info != NULL)
        *info = r->info;
    step(r, &w, FREE);
    atomic_fetch_sub(&cap__sig_routes_used, 1);
    return sig;
}

void cap__sig_routes_forked(void)
{
    for (int i = 0; i < ROUTE_SLOTS; i++)
        atomic_store(&routes[i].word, FREE);
    atomic_store(&cap__sig_routes_handed, 0);
    atomic_store(&cap__sig_routes_used, 0);
}

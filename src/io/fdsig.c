/* SPDX-License-Identifier: MIT */
/*
 * Descriptor-table changes made inside signal handlers (fd.h, the
 * paragraph above enum cap__fd_deferred_op): the queue that a handler
 * fills without a lock and the signal dispatch empties, and shutdown's
 * wake-ups, which are queued there too.
 *
 * The queue is a fixed array of slots, each claimed by a handler with a
 * CAS (FREE -> WRITING), filled, and published (READY, release); a
 * dispatcher takes a READY slot with a CAS (READY -> TAKING), copies it
 * and frees it. A slot still WRITING belongs to
 * a handler that has not returned: its own signal's dispatch (every
 * handler's return writes the dispatch eventfd, io/sigintr.c) takes it.
 * Each entry applies only to the life (gen) of its record that the
 * handler saw; a dispatch applies its entries in the order they were
 * queued, and of two new lives for one life (a close, then a creation or
 * a dup2 onto the number) only the later. When the two are split between
 * two dispatches (one running on another worker while the handler still
 * queues), the later one replaces the life the earlier one began (the
 * record's `deferred` mark), unless a wrapper began a newer one since. A full queue (more than SLOTS changes between two
 * dispatches) sets `lost`: the dispatch then ends the life of every known
 * number the kernel says is closed, lets every private pipe fall back and
 * every parked thread try again; a number closed and reused inside the
 * handlers keeps its old record until a wrapper next creates it.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/netio.h"
#include "io/pipe.h"
#include "util/sigctx.h"
#include "util/spin.h"

enum { SLOTS = 256, FREE = 0, WRITING, READY, TAKING };

struct slot {
    _Atomic int state;
    uint32_t seq; /* order of claiming: the later of two lives of one gen wins */
    int op, fd, kind;
    uint32_t gen, flags;
    uint64_t timeo[2];
};

static struct slot slots[SLOTS];
static _Atomic uint32_t next_slot;
static atomic_bool any, lost;

void cap__fd_defer(int op, int fd, int kind, uint32_t flags, const uint64_t *timeo)
{
    uint32_t gen = 0;
    if (op != CAP__FDD_DISOWN_PIPES) {
        cap__fd *f = cap__fd_peek(fd);
        if (f == NULL)
            return; /* nothing known of the number: it stays unknown */
        if (op == CAP__FDD_LIFE && kind == CAP__FD_UNKNOWN && flags == 0 &&
            atomic_load(&f->kind) == CAP__FD_UNKNOWN && atomic_load(&f->flags) == 0)
            return; /* unknown before and after, no waiter: nothing to end */
        gen = atomic_load(&f->gen);
    }
    uint32_t start = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
    for (uint32_t i = 0; i < SLOTS; i++) {
        struct slot *s = &slots[(start + i) % SLOTS];
        int st = FREE;
        if (!atomic_compare_exchange_strong(&s->state, &st, WRITING))
            continue;
        s->seq = start + i;
        s->op = op;
        s->fd = fd;
        s->kind = kind;
        s->gen = gen;
        s->flags = flags;
        s->timeo[0] = timeo != NULL ? timeo[0] : 0;
        s->timeo[1] = timeo != NULL ? timeo[1] : 0;
        atomic_store_explicit(&s->state, READY, memory_order_release);
        atomic_store_explicit(&any, true, memory_order_release);
        cap__sig_note_work_left();
        return;
    }
    atomic_store(&lost, true);
    atomic_store_explicit(&any, true, memory_order_release);
    cap__sig_note_work_left();
}

/* ---- shutdown's wake-ups ----------------------------------------------------- */

/* Threads parked writing to a socket try again. */
static void retry_writers(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if (__atomic_load_n(&f->head[CAP__IO_WRITE], __ATOMIC_ACQUIRE) != NULL)
        cap__io_ready(fd, atomic_load(&f->gen), CAP__IO_WBIT);
}

static void shut_wakes(int fd, uint32_t gen, int how)
{
    /* Reads return 0 from now on with no event to say so: as after a
     * FIN, the read side stops skipping attempts (CAP__IO_NODRAIN). */
    unsigned dirs = how == SHUT_RD   ? CAP__IO_RBIT | CAP__IO_NODRAIN
                    : how == SHUT_WR ? CAP__IO_WBIT
                                     : CAP__IO_RBIT | CAP__IO_WBIT | CAP__IO_NODRAIN;
    cap__io_ready(fd, gen, dirs);
    /* A Unix socket shut for reading also ends its peer's writes (EPIPE),
     * and the peer, perhaps another of our descriptors (a socketpair), is
     * not known: every thread parked writing tries again. Rare enough for
     * a walk of the table. */
    int domain = 0;
    socklen_t len = sizeof domain;
    if (how != SHUT_WR && syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
        domain == AF_UNIX)
        cap__fd_foreach(retry_writers, NULL);
}

void cap__fd_shut_wakes(int fd, int how)
{
    if (how < SHUT_RD || how > SHUT_RDWR)
        return;
    if (cap__in_signal_handler()) {
        cap__fd_defer(CAP__FDD_SHUT_RD + how, fd, 0, 0, NULL);
        return;
    }
    cap__fd *f = cap__fd_peek(fd);
    shut_wakes(fd, f != NULL ? atomic_load(&f->gen) : 0, how);
}

/* ---- the dispatch's side ------------------------------------------------------ */

static void apply(const struct slot *s)
{
    if (s->op == CAP__FDD_LIFE) {
        cap__fd_relife(s->fd, s->gen, s->kind, s->flags, s->timeo);
        return;
    }
    cap__fd *f = cap__fd_peek(s->fd);
    if (f == NULL || atomic_load(&f->gen) != s->gen)
        return; /* that life ended: whatever ended it woke its waiters */
    switch (s->op) {
    case CAP__FDD_ESCAPE: cap__pipe_escape_fd(s->fd); break;
    case CAP__FDD_RESIZED: cap__pipe_resized(s->fd); break;
    case CAP__FDD_SHARED: cap__fd_shared(s->fd); break;
    default: shut_wakes(s->fd, s->gen, s->op - CAP__FDD_SHUT_RD); break;
    }
}

/* After a full queue: every change it may have dropped, made broadly. */
static void catch_up(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if (cap__fd_has(f, CAP__FDF_LOCAL))
        cap__pipe_escape(f, false);
    cap__io_ready(fd, atomic_load(&f->gen), CAP__IO_RBIT | CAP__IO_WBIT | CAP__IO_NODRAIN);
}

static struct slot taken[SLOTS]; /* [run_lock] this dispatch's entries, in order */
static cap__spin run_lock = CAP__SPIN_INIT;

/* Whether taken[i] is a life that a later entry of the same dispatch
 * replaces (a close, then a dup2 or a creation onto the same number). */
static bool replaced(int i, int n)
{
    for (int j = i + 1; j < n; j++)
        if (taken[j].op == CAP__FDD_LIFE && taken[j].fd == taken[i].fd &&
            taken[j].gen == taken[i].gen)
            return true;
    return false;
}

void cap__fd_run_deferred(void)
{
    if (!atomic_exchange_explicit(&any, false, memory_order_acquire))
        return;
    cap__spin_lock(&run_lock);
    int n = 0;
    bool disown = false;
    for (int i = 0; i < SLOTS; i++) {
        struct slot *s = &slots[i];
        int st = READY; /* taken by one dispatcher only (two workers may harvest) */
        if (atomic_load_explicit(&s->state, memory_order_relaxed) != READY ||
            !atomic_compare_exchange_strong(&s->state, &st, TAKING))
            continue;
        struct slot c = { .seq = s->seq, .op = s->op, .fd = s->fd, .kind = s->kind,
                          .gen = s->gen, .flags = s->flags,
                          .timeo = { s->timeo[0], s->timeo[1] } };
        atomic_store_explicit(&s->state, FREE, memory_order_release);
        if (c.op == CAP__FDD_DISOWN_PIPES) {
            disown = true;
            continue;
        }
        int k = n++; /* insertion by seq (wrapping) */
        while (k > 0 && (int32_t)(taken[k - 1].seq - c.seq) > 0) {
            taken[k] = taken[k - 1];
            k--;
        }
        taken[k] = c;
    }
    for (int i = 0; i < n; i++)
        if (taken[i].op != CAP__FDD_LIFE || !replaced(i, n))
            apply(&taken[i]);
    cap__spin_unlock(&run_lock);
    /* After the new lives: a pipe dup'ed onto 0-2 gave its owned flag to
     * the dup (dup2 in intercept/fd.c), which the walk then disowns too. */
    if (disown)
        cap__fd_disown_pipes();
    if (atomic_exchange(&lost, false)) {
        cap__fd_forget_closed();
        cap__fd_disown_pipes();
        cap__fd_foreach(catch_up, NULL);
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * CAP_NETIO=poll: the portable fallback, level-triggered. Armed
 * descriptors live in an interest table (f->backend_slot = index + 1);
 * the holder builds a pollfd array of those that have waiters right now
 * (plus the runtime's own descriptors and the kick eventfd) and sleeps in
 * ppoll. Asking only for the directions somebody waits on keeps a
 * readable-but-unread descriptor from waking the holder over and over.
 *
 * Within a direction, only the events its waiters asked for: a poll()
 * for POLLPRI alone (select's exceptfds) or for hang-ups alone (events
 * 0) on a socket with unread data must not have ppoll return POLLIN at
 * once, every time, waking the poller for nothing until its timeout.
 * interest() works that mask out under f->lock and keeps it in the
 * descriptor's entry; a waiter that leaves does not shrink it, but
 * build() drops the directions nobody waits on any more, and within a
 * direction a stale event wakes its observers, which link again and so
 * recompute it.
 *
 * A waiter that links itself while the holder is inside ppoll must make
 * the holder rebuild its array: interest() kicks the eventfd when
 * `polling` is set. The holder sets `polling` before it reads the waiter
 * lists, and interest() runs after the link, both seq_cst: either the
 * holder's array includes the new waiter or the waiter kicks.
 *
 * A ppoll in progress holds a reference to every file in its array
 * (the kernel's poll table takes one per entry until the call returns),
 * so a descriptor closed meanwhile was not released by its close: a
 * socket's peer saw no FIN or reset, a pipe's reader no EOF, until the
 * holder woke, perhaps never. build() stamps the entries it puts in the
 * array with the harvest's round; a disarm that finds its entry so
 * stamped for the harvest in progress leaves that round in
 * f->backend_slot (HELD), and release(), before the close, kicks the
 * holder and waits for the round to end.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/netio.h"
#include "io/ownfd.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/spin.h"

struct entry {
    int fd;
    uint32_t gen;
    short events;   /* what its waiters asked for, as of the last interest() */
    uint32_t round; /* in the array of harvest `round` - 1 (0: never) */
};

/* f->backend_slot after a disarm that found f in the array of the
 * harvest in progress: HELD | that harvest's round (see the top). Slots
 * of armed descriptors (index + 1) stay below it. */
#define HELD (1u << 31)

static cap__spin set_lock = CAP__SPIN_INIT;
static struct entry *set;        /* [set_lock] */
static uint32_t set_len, set_cap; /* [set_lock] */

static int kickfd = -1;
static atomic_int kicked, polling;
static _Atomic uint32_t rounds; /* harvests that have left ppoll */
static struct pollfd *pfds;  /* owned by the holder */
static uint32_t *pgens;
static size_t pcap;

/* The set's first capacity; the holder's array has one more entry (the
 * kick eventfd). */
#define FIRST_CAP 256u

/* Takes the set's and the array's first capacity at start-up, so that
 * no worker's first harvest allocates: a fork made just then copied the
 * allocator's lock held in a sanitized build (GCC 12's AddressSanitizer
 * takes none around fork) and the child's own first harvest waited on it
 * for good (io/owned_call_kicked_by_give_back_elsewhere, its tracer). A
 * fork's child keeps the parent's arrays (see poll_forget). */
static int reserve_first(void)
{
    if (set != NULL)
        return 0;
    struct entry *s = malloc(FIRST_CAP * sizeof *s);
    struct pollfd *p = malloc((FIRST_CAP + 1) * sizeof *p);
    uint32_t *g = malloc((FIRST_CAP + 1) * sizeof *g);
    if (s == NULL || p == NULL || g == NULL) {
        free(s);
        free(p);
        free(g);
        return -ENOMEM;
    }
    set = s;
    set_cap = FIRST_CAP;
    pfds = p;
    pgens = g;
    pcap = FIRST_CAP + 1;
    return 0;
}

static int poll_start(void)
{
    int rc = reserve_first();
    if (rc != 0)
        return rc;
    kickfd = cap__ownfd_adopt((int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
    return kickfd < 0 ? -errno : cap__netio_probe_start();
}

/* The set's entries are the parent's registrations, which the child
 * forgot (io/start.c); the array is kept for the child's. */
static void poll_forget(void)
{
    cap__ownfd_close(kickfd);
    kickfd = -1;
    set_lock = (cap__spin)CAP__SPIN_INIT;
    set_len = 0;
    atomic_store(&kicked, 0);
    atomic_store(&polling, 0);
    cap__netio_probe_forget();
}

static void kick(void);

/* f->lock held, gen current (netio.h). */
static int poll_arm(cap__fd *f, int fd, uint32_t gen)
{
    /* A file with no readiness to wait for polls ready at once, every
     * time: a waiter for an event it never reports would spin through
     * its whole timeout (io/pollable.c). */
    if (!cap__netio_pollable(f, fd))
        return -EPERM;
    cap__spin_lock(&set_lock);
    if (set_len == set_cap) {
        uint32_t ncap = set_cap * 2; /* FIRST_CAP from poll_start on */
        struct entry *n = realloc(set, ncap * sizeof *n);
        if (n == NULL) {
            cap__spin_unlock(&set_lock);
            return -ENOMEM;
        }
        set = n;
        set_cap = ncap;
    }
    set[set_len] = (struct entry){ fd, gen, 0, 0 };
    f->backend_slot = ++set_len;
    cap__spin_unlock(&set_lock);
    /* The runtime's own descriptors (a disk ring's eventfd) are polled
     * without waiters, so no interest() will come for them: a holder
     * already in ppoll must rebuild its array now, or that ring's
     * completions wait for an unrelated wake-up. The check follows the
     * insertion as interest() follows a link (see the top). */
    if (cap__fd_has(f, CAP__FDF_INTERNAL) && atomic_load(&polling))
        kick();
    return 0;
}

static void poll_disarm(cap__fd *f, int fd, uint32_t gen)
{
    (void)fd;
    (void)gen;
    cap__spin_lock(&set_lock);
    uint32_t slot = f->backend_slot, held = 0;
    if (slot != 0 && slot <= set_len) {
        /* In the array of the harvest in progress: that ppoll holds the
         * file until it returns (release()). */
        uint32_t now = atomic_load(&rounds) + 1;
        if (set[slot - 1].round == now && atomic_load(&polling))
            held = HELD | (now & ~HELD);
        struct entry last = set[--set_len];
        if (slot - 1 != set_len) {
            set[slot - 1] = last;
            cap__fd *moved = cap__fd_peek(last.fd);
            if (moved != NULL)
                moved->backend_slot = slot;
        }
    }
    f->backend_slot = held;
    cap__spin_unlock(&set_lock);
}

/* Before a close of f, disarmed (see the top): once no ppoll holds its
 * file. The holder is another worker's kernel thread (this one runs the
 * closer); the kick ends its ppoll at once. */
static void poll_release(cap__fd *f, int fd)
{
    (void)fd;
    cap__spin_lock(&set_lock);
    uint32_t held = f->backend_slot;
    if (held & HELD)
        f->backend_slot = 0;
    cap__spin_unlock(&set_lock);
    if (!(held & HELD))
        return;
    kick();
    while (((atomic_load(&rounds) + 1) & ~HELD) == (held & ~HELD) && atomic_load(&polling))
        cap__kernel_yield();
}

/* kicked: set from a kick's write until the harvest drains the eventfd,
 * and cleared only after the drain (netio_epoll.c, kick, says why). */
static void kick(void)
{
    if (atomic_exchange(&kicked, 1) == 0) {
        uint64_t one = 1;
        syscall(SYS_write, kickfd, &one, sizeof one);
    }
}

/* The events a waiter of each direction may ask for. */
enum {
    READ_EVENTS = POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND | POLLRDHUP,
    WRITE_EVENTS = POLLOUT | POLLWRNORM | POLLWRBAND,
};

/* A waiter was just linked on f (under f->lock). */
static void poll_interest(cap__fd *f, int fd)
{
    (void)fd;
    short ev = cap__io_waited_events(f);
    cap__spin_lock(&set_lock);
    uint32_t slot = f->backend_slot;
    if (slot != 0 && slot <= set_len)
        set[slot - 1].events = ev;
    cap__spin_unlock(&set_lock);
    if (atomic_load(&polling))
        kick();
}

/* The events to poll f for (entry e), or -1 when nobody waits on it:
 * those asked for, in the directions that still have waiters. A waiter
 * that asked for none (a poll() for hang-ups and errors) still makes it
 * polled, for the events the kernel always reports. */
static int wanted(const cap__fd *f, const struct entry *e)
{
    if (cap__fd_has(f, CAP__FDF_INTERNAL))
        return POLLIN;
    bool rd = __atomic_load_n(&f->head[0], __ATOMIC_ACQUIRE) != NULL ||
              __atomic_load_n(&f->obs[0], __ATOMIC_ACQUIRE) != NULL;
    bool wr = __atomic_load_n(&f->head[1], __ATOMIC_ACQUIRE) != NULL ||
              __atomic_load_n(&f->obs[1], __ATOMIC_ACQUIRE) != NULL;
    if (!rd && !wr)
        return -1;
    return e->events & ((rd ? READ_EVENTS : 0) | (wr ? WRITE_EVENTS : 0));
}

/* Fills pfds with the kick eventfd and every watched descriptor that has
 * waiters. Returns the count. */
static size_t build(void)
{
    cap__spin_lock(&set_lock);
    if (pcap < (size_t)set_len + 1) {
        size_t ncap = (size_t)set_cap + 1;
        struct pollfd *np = realloc(pfds, ncap * sizeof *np);
        uint32_t *ng = np ? realloc(pgens, ncap * sizeof *ng) : NULL;
        if (np != NULL)
            pfds = np;
        if (ng != NULL) {
            pgens = ng;
            pcap = ncap;
        }
    }
    size_t n = 0;
    if (pcap > 0) {
        pfds[n++] = (struct pollfd){ .fd = kickfd, .events = POLLIN };
        uint32_t round = atomic_load(&rounds) + 1;
        for (uint32_t i = 0; i < set_len && n < pcap; i++) {
            cap__fd *f = cap__fd_peek(set[i].fd);
            int ev = f != NULL ? wanted(f, &set[i]) : -1;
            if (ev < 0)
                continue;
            set[i].round = round;
            pgens[n] = set[i].gen;
            pfds[n++] = (struct pollfd){ .fd = set[i].fd, .events = (short)ev };
        }
    }
    cap__spin_unlock(&set_lock);
    return n;
}

static void harvest(int64_t timeout_ns)
{
    atomic_store(&polling, 1);
    size_t n = build();
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts = cap__ns_to_timespec((uint64_t)timeout_ns);
        tsp = &ts;
    }
    long r = n > 0 ? syscall(SYS_ppoll, pfds, n, tsp, NULL, 0) : 0;
    atomic_fetch_add(&rounds, 1); /* its files are let go (release()) */
    atomic_store(&polling, 0);
    if (r <= 0)
        return;
    if (pfds[0].revents) {
        uint64_t v;
        syscall(SYS_read, kickfd, &v, sizeof v);
        atomic_store(&kicked, 0); /* after the drain */
    }
    for (size_t i = 1; i < n; i++) {
        short e = pfds[i].revents;
        if (e == 0)
            continue;
        unsigned dirs = 0;
        if (e & (POLLIN | POLLPRI | POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
            dirs |= CAP__IO_RBIT;
        if (e & (POLLPRI | POLLRDHUP | POLLHUP | POLLERR))
            dirs |= CAP__IO_NODRAIN;
        if (e & (POLLOUT | POLLHUP | POLLERR | POLLNVAL))
            dirs |= CAP__IO_WBIT;
        cap__io_ready(pfds[i].fd, pgens[i], dirs);
    }
}

const cap__netio cap__netio_poll = {
    .name = "poll",
    .edge = false,
    .start = poll_start,
    .forget = poll_forget,
    .arm = poll_arm,
    .disarm = poll_disarm,
    .release = poll_release,
    .interest = poll_interest,
    .harvest = harvest,
    .kick = kick,
};

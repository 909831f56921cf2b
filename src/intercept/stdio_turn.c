/* SPDX-License-Identifier: MIT */
/*
 * Streams' turns, the test of whether a stdio call may park, and
 * flockfile, ftrylockfile and funlockfile on user threads (stdio_turn.h).
 *
 * Invariants:
 *  - one turn per stream a wrapped call ever waited in or a user thread
 *    locked, kept until the stream is closed (cap__stream_turn_forget);
 *  - the lock layout is checked once; until it is known good, no call
 *    parks and flockfile is glibc's;
 *  - a stream is held by flockfile of a user thread exactly while its
 *    turn's locked_by names that thread; the thread then owns the turn,
 *    and holds glibc's lock whenever it runs (sched/held.h);
 *  - cap__stdio_user_locks counts such streams: the checks that keep
 *    other calls out cost one load while it is 0.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"
#include "sched/held.h"
#include "util/spin.h"
#include "capriccio/sync.h"

/* nptl's recursive stdio lock (_IO_lock_t): the futex word first. */
struct file_lock {
    int lock;
    int cnt;
    void *owner;
};

/* ---- a stream's turn ----------------------------------------------------- */

/* One entry per stream a wrapped call ever waited in, kept until the
 * stream is closed (cap__stream_turn_forget; a stream closed where we do
 * not see it leaves its entry to the next stream at that address, which
 * is harmless). NBUCKETS chains under one spinlock held for a lookup.
 *
 * A turn is recursive for the user thread that holds it (owner, depth):
 * a flockfile holder's own calls go on in it. */
enum { NBUCKETS = 64 };

struct cap__stdio_turn {
    FILE *fp;
    cap_mutex_t m;
    _Atomic cap_thread_t owner; /* holder of m, 0 if none */
    unsigned depth;             /* [owner] times taken */
    unsigned locked;            /* [owner] flockfile levels among them */
    _Atomic cap_thread_t locked_by; /* owner while locked != 0, else 0 */
    int saved_cnt;              /* [owner] glibc's levels while switched away */
    cap__held_lock held;        /* in the owner's list while locked != 0 */
    struct cap__stdio_turn *next;
};

_Atomic int cap__stdio_user_locks;

static cap__spin table_lock = CAP__SPIN_INIT;
static struct cap__stdio_turn *table[NBUCKETS];

static struct cap__stdio_turn **bucket(FILE *fp)
{
    uintptr_t a = (uintptr_t)fp;
    return &table[(a >> 4 ^ a >> 10) & (NBUCKETS - 1)];
}

static struct cap__stdio_turn *find_locked(FILE *fp)
{
    struct cap__stdio_turn *t = *bucket(fp);
    while (t != NULL && t->fp != fp)
        t = t->next;
    return t;
}

static struct cap__stdio_turn *find(FILE *fp)
{
    cap__spin_lock(&table_lock);
    struct cap__stdio_turn *t = find_locked(fp);
    cap__spin_unlock(&table_lock);
    return t;
}

static void release_held(cap__held_lock *l);
static void retake_held(cap__held_lock *l);

static struct cap__stdio_turn *turn_of(FILE *fp)
{
    struct cap__stdio_turn *t = find(fp);
    if (t == NULL) {
        struct cap__stdio_turn *fresh = calloc(1, sizeof *fresh); /* outside the spinlock */
        if (fresh == NULL || cap_mutex_init(&fresh->m, NULL) != 0) {
            free(fresh);
            return NULL;
        }
        fresh->fp = fp;
        fresh->held.release = release_held;
        fresh->held.retake = retake_held;
        cap__spin_lock(&table_lock);
        t = find_locked(fp);
        if (t == NULL) {
            t = fresh;
            t->next = *bucket(fp);
            *bucket(fp) = t;
            fresh = NULL;
        }
        cap__spin_unlock(&table_lock);
        if (fresh != NULL) { /* another call made one meanwhile */
            cap_mutex_destroy(&fresh->m);
            free(fresh);
        }
    }
    return t;
}

/* Takes t for the calling user thread, parking while another holds it. */
static void take(struct cap__stdio_turn *t)
{
    cap_thread_t self = cap_thread_self();
    if (atomic_load_explicit(&t->owner, memory_order_relaxed) == self) {
        t->depth++;
        return;
    }
    cap_mutex_lock(&t->m);
    atomic_store_explicit(&t->owner, self, memory_order_relaxed);
    t->depth = 1;
}

static bool try_take(struct cap__stdio_turn *t)
{
    cap_thread_t self = cap_thread_self();
    if (atomic_load_explicit(&t->owner, memory_order_relaxed) == self) {
        t->depth++;
        return true;
    }
    if (cap_mutex_trylock(&t->m) != 0)
        return false;
    atomic_store_explicit(&t->owner, self, memory_order_relaxed);
    t->depth = 1;
    return true;
}

static void give_back(void *arg)
{
    struct cap__stdio_turn *t = arg;
    if (t != NULL && --t->depth == 0) {
        atomic_store_explicit(&t->owner, 0, memory_order_relaxed);
        cap_mutex_unlock(&t->m);
    }
}

void cap__stdio_turn_begin(FILE *fp, struct cap__stdio_hold *h)
{
    h->t = turn_of(fp);
    if (h->t != NULL)
        take(h->t);
    cap_cleanup_frame_push(&h->frame, give_back, h->t);
}

void cap__stdio_turn_end(struct cap__stdio_hold *h)
{
    cap_cleanup_frame_pop(&h->frame, 1);
}

void cap__stream_turn_forget(FILE *fp)
{
    /* Another user thread in the stream (its flockfile, a call parked on
     * the stream's descriptor, or one held inside glibc's call on a cookie
     * stream while a flush of all streams writes it): wait for it to let
     * go, as glibc's fclose waits for the stream's lock. Dropped while it
     * was in, its turn would be freed under it, or, still locked, kept for
     * good (a leak). Waited for while still listed, so the holder's own
     * later calls find the same turn. */
    struct cap__stdio_turn *held = cap__ic_user() ? find(fp) : NULL;
    if (held != NULL) {
        cap_thread_t self = cap_thread_self();
        cap_thread_t by = atomic_load(&held->locked_by);
        cap_thread_t owner = atomic_load_explicit(&held->owner, memory_order_relaxed);
        if (by != self && owner != self && (by != 0 || owner != 0)) {
            take(held); /* parks until the holder's last give_back */
            give_back(held);
        }
    }
    cap__spin_lock(&table_lock);
    struct cap__stdio_turn *t = find_locked(fp);
    if (t != NULL) {
        struct cap__stdio_turn **pp = bucket(fp);
        while (*pp != t)
            pp = &(*pp)->next;
        *pp = t->next;
    }
    cap__spin_unlock(&table_lock);
    if (t == NULL)
        return;
    cap_thread_t by = atomic_load(&t->locked_by);
    if (by != 0 && by == cap_thread_self()) { /* closed under its own flockfile */
        cap__held_remove(&t->held);
        atomic_fetch_sub(&cap__stdio_user_locks, 1);
    } else if (by != 0) {
        return; /* another thread's lock: closing a stream in use is undefined; kept */
    }
    /* no call is in it: closing a stream in use is undefined */
    cap_mutex_destroy(&t->m);
    free(t);
}

static cap_rwlock_t streams_gate = CAP_RWLOCK_PREFER_READER_INITIALIZER;
/* The threads walking now (their nodes on their stacks), so that a
 * stream's end made inside a walk, by a function the walk called (a
 * cookie stream's write), does not wait for that walk. */
static cap__spin walkers_lock = CAP__SPIN_INIT;
static struct cap__stream_walker *walkers;

static bool walking_here(void)
{
    cap_thread_t self = cap_thread_self();
    bool found = false;
    cap__spin_lock(&walkers_lock);
    for (struct cap__stream_walker *w = walkers; w != NULL && !found; w = w->next)
        found = w->thread == self;
    cap__spin_unlock(&walkers_lock);
    return found;
}

void cap__streams_walk_begin(struct cap__stream_walker *w)
{
    cap_rwlock_rdlock(&streams_gate);
    w->thread = cap_thread_self();
    cap__spin_lock(&walkers_lock);
    w->next = walkers;
    walkers = w;
    cap__spin_unlock(&walkers_lock);
}

void cap__streams_walk_end(struct cap__stream_walker *w)
{
    cap__spin_lock(&walkers_lock);
    struct cap__stream_walker **pp = &walkers;
    while (*pp != w)
        pp = &(*pp)->next;
    *pp = w->next;
    cap__spin_unlock(&walkers_lock);
    cap_rwlock_unlock(&streams_gate);
}

bool cap__stream_end_begin(void)
{
    if (walking_here())
        return false; /* the walk looks again before each stream */
    cap_rwlock_wrlock(&streams_gate);
    return true;
}

void cap__stream_end_end(bool took)
{
    if (took)
        cap_rwlock_unlock(&streams_gate);
}

void cap__stream_turns_forked(void)
{
    /* Every call in a turn was a lost thread's (a fork is not made from
     * inside one), and glibc's child makes every stream's lock free, the
     * forking thread's flockfile's too: each turn starts free again, with
     * no waiters. */
    table_lock = (cap__spin)CAP__SPIN_INIT;
    streams_gate = (cap_rwlock_t)CAP_RWLOCK_PREFER_READER_INITIALIZER; /* a lost thread's */
    walkers_lock = (cap__spin)CAP__SPIN_INIT;
    walkers = NULL; /* their walks were lost threads' */
    cap__stdio_user_locks = 0;
    cap__held_forget_all();
    for (int i = 0; i < NBUCKETS; i++)
        for (struct cap__stdio_turn *t = table[i]; t != NULL; t = t->next) {
            cap_mutex_init(&t->m, NULL);
            t->owner = 0;
            t->depth = 0;
            t->locked = 0;
            t->locked_by = 0;
        }
}

/* ---- whether a call may wait here -------------------------------------- */

static int layout_state; /* 0 unchecked, 1 as expected, 2 not: never wait */

/* Whether fp's lock is held by this kernel thread: by the calling user
 * thread (its flockfile) or by another of this worker's. */
static bool held_here(FILE *fp)
{
    void *owner = __atomic_load_n(&((struct file_lock *)fp->_lock)->owner, __ATOMIC_RELAXED);
    return owner == (void *)pthread_self();
}

/* Once: a private stream's lock names this kernel thread exactly while
 * it holds it. */
static bool layout_ok(void)
{
    int s = __atomic_load_n(&layout_state, __ATOMIC_RELAXED);
    if (s != 0)
        return s == 1;
    char byte = 'x';
    FILE *f = fmemopen(&byte, 1, "r");
    bool ok = false;
    if (f != NULL && f->_lock != NULL && !(f->_flags & _IO_USER_LOCK)) {
        struct file_lock *l = f->_lock;
        bool free_before = !held_here(f) && l->lock == 0 && l->cnt == 0;
        _IO_flockfile(f);
        bool held = held_here(f) && l->lock != 0 && l->cnt == 1;
        _IO_funlockfile(f);
        ok = free_before && held && !held_here(f) && l->lock == 0;
    }
    if (f != NULL)
        fclose(f);
    __atomic_store_n(&layout_state, ok ? 1 : 2, __ATOMIC_RELAXED);
    return ok;
}

/* Whether the calling thread holds fp by flockfile. */
static bool locked_by_caller(FILE *fp)
{
    if (atomic_load_explicit(&cap__stdio_user_locks, memory_order_relaxed) == 0)
        return false;
    struct cap__stdio_turn *t = find(fp);
    return t != NULL && atomic_load(&t->locked_by) == cap_thread_self();
}

/* cap__stdio_may_park but for fp's orientation. */
static bool may_park_oriented(FILE *fp)
{
    if (fp->_fileno < 0)
        return false; /* no descriptor (fmemopen, fopencookie) */
    if (!(fp->_flags & _IO_USER_LOCK) &&
        (fp->_lock == NULL || !layout_ok() || (held_here(fp) && !locked_by_caller(fp))))
        return false; /* (held elsewhere: flockfile waits, briefly: no holder parks) */
    cap__fd *f = cap__fd_get(fp->_fileno);
    if (f == NULL)
        return false;
    /* A close under way on the number (a pclose waiting for its child,
     * whose descriptor glibc already closed): classifying would wait for
     * it, and the number may already be another stream's (io/fd.h). */
    if (cap__fd_has(f, CAP__FDF_CLOSING))
        return false;
    int kind = cap__fd_classify(f, fp->_fileno);
    if (kind != CAP__FD_SOCKET && kind != CAP__FD_STREAM)
        return false;
    if (cap__fd_has(f, CAP__FDF_UNPOLLABLE | CAP__FDF_INTERNAL) || cap__ic_nonblock(f))
        return false;
    return true;
}

bool cap__stdio_may_park(FILE *fp)
{
    if (fp == NULL || !cap__ic_user() || fp->_mode > 0)
        return false; /* wide-oriented: stdio_wide.c */
    return may_park_oriented(fp);
}

bool cap__stdio_may_park_wide(FILE *fp)
{
    if (fp == NULL || !cap__ic_user() || fp->_mode < 0)
        return false; /* byte-oriented: a wide call fails in glibc at once */
    return may_park_oriented(fp);
}

/* ---- flockfile on a user thread (stdio_turn.h) ---------------------------- */

/* Whether flockfile of fp by the caller is done here: a user thread, and
 * a stream with glibc's lock as we know it. */
static bool lock_here(FILE *fp)
{
    return fp != NULL && cap__ic_user() && !(fp->_flags & _IO_USER_LOCK) && fp->_lock != NULL &&
           layout_ok();
}

/* held's switch hooks: glibc's lock let go entirely, then taken back as
 * deep (sched/held.h). Set while the thread runs, so owner is this
 * kernel thread; if it is not (glibc's lock made free by a fork's child,
 * say), nothing is let go. */
static void release_held(cap__held_lock *l)
{
    struct cap__stdio_turn *t = (struct cap__stdio_turn *)((char *)l - offsetof(struct cap__stdio_turn, held));
    struct file_lock *fl = t->fp->_lock;
    t->saved_cnt = 0;
    if (!held_here(t->fp) || fl->cnt < 1)
        return;
    t->saved_cnt = fl->cnt;
    fl->cnt = 1;
    _IO_funlockfile(t->fp);
}

static void retake_held(cap__held_lock *l)
{
    struct cap__stdio_turn *t = (struct cap__stdio_turn *)((char *)l - offsetof(struct cap__stdio_turn, held));
    if (t->saved_cnt == 0)
        return;
    _IO_flockfile(t->fp);
    ((struct file_lock *)t->fp->_lock)->cnt += t->saved_cnt - 1;
}

/* One more flockfile level of t, whose turn the caller has taken. */
static void lock_level(struct cap__stdio_turn *t)
{
    if (t->locked++ == 0) {
        atomic_fetch_add(&cap__stdio_user_locks, 1);
        atomic_store(&t->locked_by, cap_thread_self());
        cap__held_push(&t->held);
    }
}

static void unlock_level(struct cap__stdio_turn *t)
{
    if (--t->locked == 0) {
        cap__held_remove(&t->held);
        atomic_store(&t->locked_by, 0);
        atomic_fetch_sub(&cap__stdio_user_locks, 1);
    }
    give_back(t);
}

void flockfile(FILE *fp)
{
    struct cap__stdio_turn *t = lock_here(fp) ? turn_of(fp) : NULL;
    if (t == NULL) { /* (or no memory for a turn: glibc's, as before) */
        _IO_flockfile(fp);
        return;
    }
    take(t);
    lock_level(t);
    _IO_flockfile(fp);
}

int ftrylockfile(FILE *fp)
{
    struct cap__stdio_turn *t = lock_here(fp) ? turn_of(fp) : NULL;
    if (t == NULL)
        return _IO_ftrylockfile(fp);
    if (!try_take(t))
        return -1;
    if (_IO_ftrylockfile(fp) != 0) { /* inside a call of a thread of another worker */
        give_back(t);
        return -1;
    }
    lock_level(t);
    return 0;
}

void funlockfile(FILE *fp)
{
    struct cap__stdio_turn *t = lock_here(fp) ? find(fp) : NULL;
    if (t == NULL || atomic_load(&t->locked_by) != cap_thread_self()) {
        _IO_funlockfile(fp);
        return;
    }
    _IO_funlockfile(fp);
    unlock_level(t);
}

/* The turn of fp if a user thread other than the caller holds fp by
 * flockfile, else NULL. */
static struct cap__stdio_turn *locked_by_other(FILE *fp)
{
    struct cap__stdio_turn *t = find(fp);
    if (t == NULL)
        return NULL;
    cap_thread_t by = atomic_load(&t->locked_by);
    return by != 0 && by != cap_thread_self() ? t : NULL;
}

/* Waits, parked, while another user thread holds fp by flockfile or a
 * hold (cap__stdio_hold_begin). */
static void wait_unheld(FILE *fp)
{
    struct cap__stdio_turn *t;
    while (cap__ic_user() && (t = locked_by_other(fp)) != NULL) {
        take(t); /* parks until the holder's last funlockfile */
        give_back(t);
    }
}

/* cap__stdio_lock while some user thread holds a stream by flockfile or
 * a hold: another's hold of fp is waited for first, without glibc's lock,
 * which a pool thread working for the holder may have (a wide scanf:
 * stdio_wide.c); then the lock, and if a holder came meanwhile, it is let go
 * and the wait made again. Read under glibc's lock, a holder is seen: it
 * takes its turn and is named before it takes that lock, and lets it go
 * only when it switches away. */
void cap__stdio_lock_slow(FILE *fp)
{
    for (;;) {
        wait_unheld(fp);
        _IO_flockfile(fp);
        if (!cap__ic_user() || locked_by_other(fp) == NULL)
            return;
        _IO_funlockfile(fp);
    }
}

/* ---- memory streams -------------------------------------------------------- */

/* glibc's fmemopen makes a cookie stream whose functions are glibc's own
 * and never park: holding it for each call (an fputc 4x as dear) buys
 * nothing. Such a stream is told from the program's cookie streams by its
 * read function, which glibc keeps in the cookie stream's record (its
 * struct _IO_cookie_file: the FILE, the vtable, the cookie, then the four
 * functions, mangled, but the same for every fmemopen stream of the
 * process). The layout is checked once, on a cookie stream whose cookie
 * we know; if it is not as expected, every stream without a descriptor is
 * held. */
struct cookie_file {
    FILE file;
    const void *vtable;
    void *cookie;
    cookie_io_functions_t io;
};

static int memory_state; /* 0 unchecked, 1 the two below known, 2 unknown */
static const void *cookie_vtable; /* every cookie stream's */
static void *memory_read;         /* fmemopen's read function, mangled */

static ssize_t probe_read(void *cookie, char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    (void)n;
    return 0;
}

static void learn_memory_read(void)
{
    static char probe_cookie;
    char byte = 'x';
    FILE *mine = fopencookie(&probe_cookie, "r", (cookie_io_functions_t){ .read = probe_read });
    FILE *mem = fmemopen(&byte, 1, "r");
    struct cookie_file *m = (struct cookie_file *)mine, *f = (struct cookie_file *)mem;
    bool ok = m != NULL && f != NULL && m->cookie == &probe_cookie && m->vtable == f->vtable &&
              (void *)m->io.read != (void *)f->io.read;
    if (ok) {
        cookie_vtable = m->vtable;
        memory_read = (void *)f->io.read;
    }
    if (mine != NULL)
        fclose(mine);
    if (mem != NULL)
        fclose(mem);
    __atomic_store_n(&memory_state, ok ? 1 : 2, __ATOMIC_RELEASE);
}

/* Whether fp, a stream without a descriptor, is one of fmemopen's: a
 * cookie stream (by its vtable, which every FILE has: other kinds of
 * stream have no cookie fields to read) with fmemopen's read function. */
static bool memory_stream(FILE *fp)
{
    int s = __atomic_load_n(&memory_state, __ATOMIC_ACQUIRE);
    if (s == 0) {
        learn_memory_read();
        s = __atomic_load_n(&memory_state, __ATOMIC_ACQUIRE);
    }
    struct cookie_file *c = (struct cookie_file *)fp;
    return s == 1 && c->vtable == cookie_vtable && (void *)c->io.read == memory_read;
}

void cap__stdio_guard_slow(FILE *fp, struct cap__stdio_guard *g)
{
    if (!lock_here(fp))
        return;
    /* No descriptor: the stream's functions are the application's and may
     * park inside glibc's call (a cookie's read on a pipe). Held as by
     * flockfile, glibc's lock is let go while this thread is switched
     * away, and every other user thread's call waits for the turn. (If no
     * turn could be made, locked as any other stream: as before.) Not
     * fmemopen's, whose functions are glibc's. */
    if (fp->_fileno < 0 && !memory_stream(fp) && cap__stdio_hold_begin(fp, &g->h)) {
        g->held = true;
        return;
    }
    if (atomic_load_explicit(&cap__stdio_user_locks, memory_order_relaxed) == 0)
        return;
    cap__stdio_lock_slow(fp);
    g->locked = true;
}

/* ---- a hold for the offload pool (stdio_turn.h) ---------------------------- */

static void hold_undo(void *arg)
{
    struct cap__stdio_hold *h = arg;
    if (h->locked) {
        /* A cancel that acted inside glibc's call (in a cookie's function)
         * left that call's levels of glibc's lock taken: the stack is not
         * unwound, so glibc's own cleanup never runs. Let them go with
         * ours, as nptl's unwinding would. (Only while this kernel thread
         * holds it: a pool thread working for the holder may have it.) */
        struct file_lock *fl = h->t->fp->_lock;
        if (held_here(h->t->fp) && fl->cnt > h->depth)
            fl->cnt = h->depth;
        _IO_funlockfile(h->t->fp);
        unlock_level(h->t);
    } else {
        give_back(h->t);
    }
}

bool cap__stdio_hold_begin(FILE *fp, struct cap__stdio_hold *h)
{
    h->t = turn_of(fp);
    if (h->t == NULL)
        return false;
    h->locked = lock_here(fp);
    take(h->t);
    if (h->locked) { /* as flockfile */
        lock_level(h->t);
        _IO_flockfile(fp);
        h->depth = ((struct file_lock *)fp->_lock)->cnt;
    }
    cap_cleanup_frame_push(&h->frame, hold_undo, h);
    return true;
}

void cap__stdio_hold_end(struct cap__stdio_hold *h)
{
    cap_cleanup_frame_pop(&h->frame, 1);
}

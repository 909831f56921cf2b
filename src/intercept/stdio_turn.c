/* SPDX-License-Identifier: MIT */
/*
 * Streams' turns and the test of whether a stdio call may park
 * (stdio_turn.h).
 *
 * Invariants:
 *  - one turn per stream a wrapped call ever waited in, kept until the
 *    stream is closed (cap__stream_turn_forget);
 *  - the lock layout is checked once; until it is known good, no call
 *    parks.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"
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
 * is harmless). NBUCKETS chains under one spinlock held for a lookup. */
enum { NBUCKETS = 64 };

struct cap__stdio_turn {
    FILE *fp;
    cap_mutex_t m;
    struct cap__stdio_turn *next;
};

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

static void give_back(void *arg)
{
    struct cap__stdio_turn *t = arg;
    if (t != NULL)
        cap_mutex_unlock(&t->m);
}

static struct cap__stdio_turn *turn_of(FILE *fp)
{
    cap__spin_lock(&table_lock);
    struct cap__stdio_turn *t = find_locked(fp);
    cap__spin_unlock(&table_lock);
    if (t == NULL) {
        struct cap__stdio_turn *fresh = malloc(sizeof *fresh); /* outside the spinlock */
        if (fresh == NULL || cap_mutex_init(&fresh->m, NULL) != 0) {
            free(fresh);
            return NULL;
        }
        fresh->fp = fp;
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

void cap__stdio_turn_begin(FILE *fp, struct cap__stdio_hold *h)
{
    h->t = turn_of(fp);
    if (h->t != NULL)
        cap_mutex_lock(&h->t->m);
    cap_cleanup_frame_push(&h->frame, give_back, h->t);
}

void cap__stdio_turn_end(struct cap__stdio_hold *h)
{
    cap_cleanup_frame_pop(&h->frame, 1);
}

void cap__stream_turn_forget(FILE *fp)
{
    cap__spin_lock(&table_lock);
    struct cap__stdio_turn *t = find_locked(fp);
    if (t != NULL) {
        struct cap__stdio_turn **pp = bucket(fp);
        while (*pp != t)
            pp = &(*pp)->next;
        *pp = t->next;
    }
    cap__spin_unlock(&table_lock);
    if (t != NULL) { /* no call is in it: closing a stream in use is undefined */
        cap_mutex_destroy(&t->m);
        free(t);
    }
}

void cap__stream_turns_forked(void)
{
    /* Every call in a turn was a lost thread's (a fork is not made from
     * inside one): each turn starts free again, with no waiters. */
    table_lock = (cap__spin)CAP__SPIN_INIT;
    for (int i = 0; i < NBUCKETS; i++)
        for (struct cap__stdio_turn *t = table[i]; t != NULL; t = t->next)
            cap_mutex_init(&t->m, NULL);
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
        flockfile(f);
        bool held = held_here(f) && l->lock != 0 && l->cnt == 1;
        funlockfile(f);
        ok = free_before && held && !held_here(f) && l->lock == 0;
    }
    if (f != NULL)
        fclose(f);
    __atomic_store_n(&layout_state, ok ? 1 : 2, __ATOMIC_RELAXED);
    return ok;
}

bool cap__stdio_may_park(FILE *fp)
{
    if (fp == NULL || !cap__ic_user())
        return false;
    if (fp->_mode > 0 || fp->_fileno < 0)
        return false; /* wide-oriented, or no descriptor (fmemopen, fopencookie) */
    if (!(fp->_flags & _IO_USER_LOCK) && (fp->_lock == NULL || !layout_ok() || held_here(fp)))
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

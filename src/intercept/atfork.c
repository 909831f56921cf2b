/* SPDX-License-Identifier: MIT */
/*
 * Fork handlers registered with cap_atfork (pthread_atfork through
 * <capriccio/pthread.h>), run by the fork wrapper (handover.c): prepare
 * handlers newest first before the runtime's own fork preparation, so a
 * prepare handler may lock a Capriccio mutex and park; parent and child
 * handlers oldest first after the fork, the child's once the runtime has
 * made the child's state its own (one worker, the forking thread alone,
 * fresh I/O instances), so a child handler may unlock or initialise
 * mutexes and create threads. glibc's own list (pthread_atfork called by
 * code not compiled through the header) runs inside the real fork,
 * between the two: as if every handler registered here had been
 * registered after all of glibc's.
 *
 * The list: registration entries, never freed (there is no way to remove
 * a handler), each linked to the one registered before (older) and after
 * (newer). The lock orders registrations and covers only the linking, a
 * few stores, never a call: any kernel thread may register, a user thread
 * or not, and a handler may register more. A fork takes a snapshot
 * without it (the newest entry, which a registration publishes last, with
 * release: a fork made by a signal handler that interrupted a
 * registration on its own kernel thread would wait for ever on the lock)
 * and runs exactly the entries up to it, in all three phases: an entry
 * added meanwhile (by a handler, or by another thread) is not run by this
 * fork, neither its prepare nor its parent or child handler. Links of
 * entries up to the snapshot were written before it was published, so
 * the walk sees them.
 *
 * In the child, another kernel thread of the parent may have held the
 * lock at the fork: the child resets it (the holder is gone, and a half
 * linked entry is at worst lost to later forks of the child).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "intercept/atfork.h"
#include "util/spin.h"

struct cap__atfork_entry {
    void (*prepare)(void);
    void (*parent)(void);
    void (*child)(void);
    struct cap__atfork_entry *older;
    struct cap__atfork_entry *newer;
};

static cap__spin lock = CAP__SPIN_INIT;
static struct cap__atfork_entry *oldest;
static struct cap__atfork_entry *_Atomic newest;

int cap_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    struct cap__atfork_entry *e = malloc(sizeof *e);
    if (e == NULL)
        return ENOMEM;
    *e = (struct cap__atfork_entry){ .prepare = prepare, .parent = parent, .child = child };
    cap__spin_lock(&lock);
    struct cap__atfork_entry *last = atomic_load_explicit(&newest, memory_order_relaxed);
    e->older = last;
    if (last != NULL)
        last->newer = e;
    else
        oldest = e;
    atomic_store_explicit(&newest, e, memory_order_release); /* the snapshot's */
    cap__spin_unlock(&lock);
    return 0;
}

void cap__atfork_prepare(cap__atfork_snap *snap)
{
    snap->last = atomic_load_explicit(&newest, memory_order_acquire);
    snap->first = snap->last != NULL ? oldest : NULL;
    for (struct cap__atfork_entry *e = snap->last; e != NULL; e = e->older)
        if (e->prepare != NULL)
            e->prepare();
}

/* Oldest first, up to the snapshot's newest entry. */
static void run_forward(const cap__atfork_snap *snap, bool child)
{
    if (snap->last == NULL)
        return;
    for (struct cap__atfork_entry *e = snap->first;; e = e->newer) {
        void (*fn)(void) = child ? e->child : e->parent;
        if (fn != NULL)
            fn();
        if (e == snap->last)
            break;
    }
}

void cap__atfork_parent(const cap__atfork_snap *snap)
{
    run_forward(snap, false);
}

void cap__atfork_child(const cap__atfork_snap *snap)
{
    lock = (cap__spin)CAP__SPIN_INIT;
    run_forward(snap, true);
}

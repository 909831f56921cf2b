/* SPDX-License-Identifier: MIT */
/*
 * dlopen, dlmopen and dlclose: the loader's calls that run a library's
 * own code (constructors, destructors) inside glibc's loader lock, a
 * recursive lock whose owner is the kernel thread. A constructor that
 * waits (a read, a sleep) parks its user thread there with the lock
 * held, and another user thread of the worker then entered the loader as
 * the same owner: its dlopen of that library returned before the
 * constructor had finished, and two dlopens ran in the loader at once.
 *
 * The entries are the arch's (arch/x86_64/dl_thunk.S): glibc takes the
 * caller from its return address, which a C wrapper would change, so an
 * entry calls cap__dl_enter and jumps into glibc with the stack as the
 * caller made it. cap__dl_enter, on a user thread:
 *  - waits while the loader's turn is taken (below), unless the thread
 *    is inside a call of its own already (a constructor's dlopen);
 *  - records the call (the return slot and the caller's return address),
 *    binds the thread to its kernel thread (kernel_bound: glibc lets only
 *    the owner unlock), and hooks the thread's switches (sched/held.h).
 * At a switch inside the call the hook takes the turn and puts
 * cap__dl_return in the return slot, so the call comes back here as it
 * ends (cap__dl_returned), which gives the turn back and jumps to the
 * caller. A call that ends without a switch is found finished at the
 * thread's next switch or loader call, and forgotten then.
 *
 * The turn: taken only by a thread switching away inside a call, so that
 * no other user thread enters the loader until that call ends; nobody
 * else can be inside it meanwhile (the others of that worker could not
 * run, those of other workers wait in glibc's lock). A record is live
 * while its slot lies above the stack pointer and still holds what was
 * put there; the caller's own next call from the same frame overwrites
 * the slot, so a finished call is never taken for a live one.
 *
 * Limits: RECORDS calls at once (beyond, a call goes unguarded, as
 * before); glibc's own loads (a name-service module, a gconv module)
 * and the other loader calls (dlsym, dladdr) take no turn.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include "intercept/intercept.h"
#include "sched/held.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/die.h"

enum { DL_OPEN, DL_MOPEN, DL_CLOSE, RECORDS = 64 };

struct record {
    cap__held_lock held;           /* first: the switch hook's handle */
    _Atomic cap_thread_t owner;    /* 0: free; also free once that thread is
                                      gone (it exited inside no call, the
                                      record of its last one still here) */
    void **slot;                   /* the call's return slot */
    void *caller;                  /* the return address found there */
    bool claimed;                  /* holds the turn; cap__dl_return in the slot */
};

static struct record records[RECORDS];
static _Atomic uint32_t turn; /* 1 while a thread switched away inside a call */

void cap__dl_return(void);        /* arch/x86_64/dl_thunk.S */
void *cap__dl_enter(void **slot, int which);
void *cap__dl_returned(void);

static void *real(int which)
{
    static void *_Atomic fns[3];
    static const char *const names[3] = { "dlopen", "dlmopen", "dlclose" };
    void *fn = atomic_load_explicit(&fns[which], memory_order_relaxed);
    if (fn == NULL) {
        fn = cap__real_sym(names[which]);
        if (fn == NULL)
            cap__die("libc has no %s\n", names[which]);
        atomic_store_explicit(&fns[which], fn, memory_order_relaxed);
    }
    return fn;
}

static struct record *find(const cap__thread *t)
{
    cap_thread_t h = cap__thread_handle(t);
    for (int i = 0; i < RECORDS; i++)
        if (atomic_load_explicit(&records[i].owner, memory_order_relaxed) == h)
            return &records[i];
    return NULL;
}

/* A free record, now t's; NULL if none is. */
static struct record *take_record(const cap__thread *t)
{
    cap_thread_t h = cap__thread_handle(t);
    for (int i = 0; i < RECORDS; i++) {
        cap_thread_t was = atomic_load(&records[i].owner);
        if ((was == 0 || cap__thread_lookup(was) == NULL) &&
            atomic_compare_exchange_strong(&records[i].owner, &was, h))
            return &records[i];
    }
    return NULL;
}

/* Whether r's call is still running (above). */
static bool live(const struct record *r)
{
    const char *sp = __builtin_frame_address(0);
    void *want = r->claimed ? (void *)cap__dl_return : r->caller;
    return sp < (const char *)r->slot && *r->slot == want;
}

/* Forgets t's record r; t is the running thread. */
static void drop(cap__thread *t, struct record *r)
{
    t->kernel_bound--;
    cap__held_remove(&r->held);
    atomic_store_explicit(&r->owner, 0, memory_order_release);
}

/* The switch hook (sched/held.h), on t's stack as it switches away. */
static void on_switch(cap__held_lock *l)
{
    struct record *r = (struct record *)l;
    cap__thread *t = cap__current(); /* the list is the running thread's */
    if (!live(r)) {
        drop(t, r); /* it ended without a switch */
        return;
    }
    if (r->claimed)
        return;
    uint32_t free_turn = 0;
    if (!atomic_compare_exchange_strong(&turn, &free_turn, 1))
        return; /* cannot happen (above); the call goes unguarded */
    r->claimed = true;
    *r->slot = (void *)cap__dl_return;
}

static void on_resume(cap__held_lock *l)
{
    (void)l;
}

void *cap__dl_enter(void **slot, int which)
{
    void *fn = real(which);
    if (!cap__ic_user())
        return fn;
    int saved_errno = errno;
    cap__thread *t = cap__current();
    struct record *r = t->held_locks != NULL ? find(t) : NULL;
    if (r != NULL) {
        if (live(r) && slot < r->slot)
            return fn; /* inside its own call: a constructor's */
        drop(t, r);
    }
    uint32_t v;
    while ((v = atomic_load(&turn)) != 0)
        cap__wait_on(&turn, v, CAP__FOREVER, CAP__PARK_WAIT);
    r = take_record(t);
    if (r != NULL) {
        r->slot = slot;
        r->caller = *slot;
        r->claimed = false;
        r->held.release = on_switch;
        r->held.retake = on_resume;
        t->kernel_bound++;
        cap__held_push(&r->held);
    }
    cap__ic_set_errno(saved_errno); /* the wait may have parked */
    return fn;
}

void *cap__dl_returned(void)
{
    int saved_errno = errno;
    cap__thread *t = cap__current();
    struct record *r = t != NULL ? find(t) : NULL;
    if (r == NULL || !r->claimed)
        cap__die("a loader call returned through the runtime without its record (a bug)\n");
    void *caller = r->caller;
    drop(t, r);
    atomic_store(&turn, 0);
    cap__wake_on(&turn, INT_MAX);
    errno = saved_errno;
    return caller;
}

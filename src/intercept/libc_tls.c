/* SPDX-License-Identifier: MIT */
/*
 * glibc's state that POSIX makes per thread and glibc keeps in the kernel
 * thread's TLS, per user thread: the locale uselocale() sets, and the
 * result dlerror() reports. The user threads of a worker shared both,
 * across their parks too: a thread formatting in its own locale resumed
 * in another thread's (MB_CUR_MAX, nl_langinfo, towupper), and a thread
 * that parked between a failing dlopen and its dlerror read another
 * thread's message, or none once another thread's dlsym had cleared it.
 *
 * A thread that has either holds it as a lock of its kernel thread
 * (sched/held.h, through its cap__thread_rare block, made on first need):
 * at each switch away the worker lets go (the global locale back; the
 * dlerror result moved into the thread), and as the thread resumes, on
 * whichever worker, it is taken again. So, the invariant: between two
 * threads a kernel thread is in the global locale and has no dlerror
 * result. A thread that ends leaves it so (cap__libc_tls_exit, after the
 * key destructors); a fork's child keeps its caller's locale.
 *
 * The locale: uselocale on a user thread sets it through glibc, as
 * before, and records it. Threads that never call it pay nothing; one
 * with a locale of its own pays two of glibc's uselocale calls (four TLS
 * stores each) per switch.
 *
 * The dlerror result: glibc 2.34 on keeps it in __libc_dlerror_result, a
 * TLS pointer (GLIBC_PRIVATE), set by any loader call that fails; glibc
 * 2.36 frees it at the dlerror after the one that reported it, and at the
 * next loader call that succeeds. Every switch looks at the word (one
 * load: worker.c); a set word makes the thread leaving take it along
 * (cap__dl_error_stash), so a thread carries a result only from a
 * failure to then. One that ends with a result frees it through glibc's
 * dlerror; one without a message exists only inside a loader call (a
 * library constructor that ended its thread) and is a bare allocation,
 * freed here. The word is found once at start-up with dlsym, which gives
 * the calling thread's address of a TLS symbol; libc's TLS is in the
 * static block, at one offset from the thread pointer in every thread.
 * Without it (a libc that lacks it), a worker's word is one of its own
 * that stays NULL, and dlerror stays per kernel thread (README).
 *
 * inet_ntoa: glibc formats into a buffer of the kernel thread's TLS, which
 * another user thread of the worker overwrote while the caller was parked
 * before it used the string (a log line whose stream flushed, and so
 * parked, before it reached the address). On a user thread it is
 * formatted into the thread's block instead.
 *
 * Elsewhere glibc's calls, unchanged: on kernel threads the runtime does
 * not run, and in a signal handler (uselocale is not async-signal-safe).
 * The runtime's own kernel threads (the offload pool's) stay in the
 * global locale: a call made there for a user thread (a name lookup)
 * does not see the thread's locale. Without memory for a thread's block,
 * uselocale fails with ENOMEM, and a dlerror result stays on the kernel
 * thread, as before.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "intercept/intercept.h"
#include "sched/held.h"
#include "sched/worker.h"
#include "thread/thread.h"

/* One cached lookup, made by the wrapper before any hold needs it. */
static locale_t real_uselocale(locale_t loc)
{
    return CAP__REAL(uselocale)(loc);
}

static cap__thread_rare *rare_of(cap__thread *t)
{
    if (t->rare == NULL)
        t->rare = calloc(1, sizeof *t->rare);
    return t->rare;
}

/* Frees the dlerror result in slot, glibc's way (above). */
static void dispose(void **slot)
{
    for (int i = 0; i < 2 && *slot != NULL; i++)
        if (CAP__REAL(dlerror)() == NULL)
            break;
    if (*slot != NULL) { /* no message: a bare allocation */
        free(*slot);
        *slot = NULL;
    }
}

static void switched_away(cap__held_lock *l)
{
    cap__thread_rare *r = (cap__thread_rare *)((char *)l - offsetof(cap__thread_rare, held));
    if (r->locale != NULL)
        real_uselocale(LC_GLOBAL_LOCALE);
    /* (A dlerror result was moved already: cap__dl_error_stash.) */
}

static void unhold(cap__thread_rare *r)
{
    if (r->holding) {
        cap__held_remove(&r->held);
        r->holding = false;
    }
}

static void resumed(cap__held_lock *l)
{
    cap__thread_rare *r = (cap__thread_rare *)((char *)l - offsetof(cap__thread_rare, held));
    if (r->locale != NULL)
        real_uselocale((locale_t)r->locale);
    if (r->dl_error != NULL) {
        void **slot = cap__current()->worker->dlerror_slot;
        if (*slot != NULL) /* no thread's: a handler's on the scheduler context */
            dispose(slot);
        *slot = r->dl_error;
        r->dl_error = NULL;
    }
    if (r->locale == NULL)
        unhold(r); /* a hold may remove itself (held.h) */
}

static void hold(cap__thread_rare *r)
{
    if (r->holding)
        return;
    r->held.release = switched_away;
    r->held.retake = resumed;
    cap__held_push(&r->held);
    r->holding = true;
}

locale_t uselocale(locale_t newloc)
{
    if (newloc == (locale_t)0 || !cap__ic_user())
        return real_uselocale(newloc); /* a question, or not ours to track */
    cap__thread *self = cap__current();
    void *mine = newloc == LC_GLOBAL_LOCALE ? NULL : (void *)newloc;
    if (mine != NULL && rare_of(self) == NULL) {
        errno = ENOMEM;
        return (locale_t)0;
    }
    locale_t old = real_uselocale(newloc);
    cap__thread_rare *r = self->rare;
    if (old == (locale_t)0 || r == NULL)
        return old; /* refused, or back to the global locale it never left */
    r->locale = mine;
    if (mine != NULL)
        hold(r);
    else
        unhold(r); /* (a running thread has no dlerror result moved out) */
    return old;
}

char *inet_ntoa(struct in_addr in)
{
    cap__thread_rare *r = cap__ic_user() ? rare_of(cap__current()) : NULL;
    if (r == NULL) /* not a user thread, or no memory for the block */
        return CAP__REAL(inet_ntoa)(in);
    const unsigned char *b = (const unsigned char *)&in.s_addr; /* network order */
    snprintf(r->inet_ntoa, sizeof r->inet_ntoa, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    return r->inet_ntoa;
}

/* worker.h; on the main kernel thread first, before any other worker. */
void **cap__dl_error_slot(void **none)
{
    static bool looked, found;
    static ptrdiff_t tp_offset;
    if (!looked) {
        looked = true;
        void *p = dlsym(RTLD_DEFAULT, "__libc_dlerror_result");
        if (p != NULL) {
            tp_offset = (char *)p - (char *)__builtin_thread_pointer();
            found = true;
        } else {
            dlerror(); /* our failed lookup's message is not the program's */
        }
    }
    return found ? (void **)((char *)__builtin_thread_pointer() + tp_offset) : none;
}

/* worker.h */
void cap__dl_error_stash(cap__thread *self)
{
    cap__thread_rare *r = rare_of(self);
    if (r == NULL)
        return; /* it stays on the kernel thread, as before */
    void **slot = self->worker->dlerror_slot;
    r->dl_error = *slot;
    *slot = NULL;
    hold(r);
}

/* thread.h */
void cap__libc_tls_exit(cap__thread *self)
{
    void **slot = self->worker->dlerror_slot;
    if (*slot != NULL)
        dispose(slot);
    cap__thread_rare *r = self->rare;
    if (r == NULL)
        return;
    if (r->locale != NULL) {
        real_uselocale(LC_GLOBAL_LOCALE);
        r->locale = NULL;
    }
    unhold(r);
}

/* intercept.h */
void cap__libc_tls_forked(void)
{
    cap__thread *self = cap__current();
    if (self == NULL || self->rare == NULL)
        return;
    self->rare->holding = false; /* the list was forgotten */
    if (self->rare->locale != NULL)
        hold(self->rare);
}

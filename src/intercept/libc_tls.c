/* SPDX-License-Identifier: MIT */
/*
 * glibc's state that POSIX (or glibc) makes per thread and glibc keeps in
 * the kernel thread's TLS, per user thread: the locale uselocale() sets,
 * the result dlerror() reports, and inet_ntoa's string. The user threads
 * of a worker shared them, across their parks too: a thread formatting
 * in its own locale resumed in another thread's (MB_CUR_MAX, nl_langinfo,
 * towupper); a thread that parked between a failing dlopen and its
 * dlerror read another thread's message, or none once another thread's
 * dlsym had cleared it; a thread that parked before it read inet_ntoa's
 * string (a log line whose stream flushed, and so parked, before it
 * reached the address) could find another thread's address there.
 *
 * The locale: uselocale on a user thread sets it through glibc, as
 * before, and records it in the thread's cap__thread_rare block (made at
 * its first locale of its own). While it has one, the thread holds it as
 * a lock of its kernel thread (sched/held.h): at each switch away the
 * worker puts back the global locale, and as the thread resumes, on
 * whichever worker, sets the thread's again. So a kernel thread is in the
 * global locale between two threads; an ending thread leaves it so
 * (cap__libc_tls_exit, after the key destructors), and a fork's child
 * keeps its caller's. Threads that never call uselocale pay nothing; one
 * with a locale of its own pays two of glibc's uselocale calls (four TLS
 * stores each) per switch.
 *
 * The dlerror result: glibc 2.34 on keeps it in __libc_dlerror_result, a
 * TLS pointer (GLIBC_PRIVATE), set by a loader call that fails; glibc
 * 2.36 frees it at the dlerror after the one that reported it, and at the
 * next loader call that succeeds. Every switch looks at the word (one
 * load, sched/worker.c): a thread that leaves with it set keeps it in the
 * switch's own frame, the word cleared, and puts it back as it resumes
 * (cap__dl_error_put_back), so it needs no memory and no allocation
 * inside a switch. So a kernel thread has no result between two threads;
 * an ending thread's is freed through glibc's dlerror, and one without a
 * message, which exists only inside a loader call (a library constructor
 * that ended its thread), is a bare allocation, freed here. The word is
 * found once at start-up with dlsym, which gives the calling thread's
 * address of a TLS symbol; libc's TLS is in the static block, at one
 * offset from the thread pointer in every thread. Without it (a libc
 * that lacks it), every worker's word is one of the runtime's that stays
 * NULL, and dlerror stays per kernel thread (README).
 *
 * inet_ntoa: on a user thread the string is formatted into the thread's
 * block instead of glibc's buffer. strerror, strerror_l and strsignal:
 * glibc formats a number it has no message for ("Unknown error 10007",
 * "Real-time signal 3") into a buffer of the kernel thread's; on a user
 * thread that string is copied into the thread's block at once, before
 * anything can park, and the copy returned. Fixed messages are glibc's
 * own strings, returned as they are (a copy would make two calls in one
 * printf share a buffer that glibc does not share).
 *
 * Elsewhere glibc's calls, unchanged: on kernel threads the runtime does
 * not run, and in a signal handler (uselocale is not async-signal-safe).
 * A call the offload pool makes for a user thread (a wide stream's
 * flush, a name lookup) runs in the thread's locale (io/offload.c).
 * Without memory for a thread's block,
 * uselocale fails with ENOMEM, and inet_ntoa uses glibc's buffer.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The hold of a thread with a locale of its own (see the top). */
static void switched_away(cap__held_lock *l)
{
    (void)l;
    real_uselocale(LC_GLOBAL_LOCALE);
}

static void resumed(cap__held_lock *l)
{
    cap__thread_rare *r = (cap__thread_rare *)((char *)l - offsetof(cap__thread_rare, held));
    real_uselocale((locale_t)r->locale);
}

static void hold(cap__thread_rare *r)
{
    r->held.release = switched_away;
    r->held.retake = resumed;
    cap__held_push(&r->held);
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
    if (mine != NULL && r->locale == NULL)
        hold(r);
    else if (mine == NULL && r->locale != NULL)
        cap__held_remove(&r->held);
    r->locale = mine;
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

/* glibc's string s, kept in the calling user thread's buffer for it
 * (its block's strerror or strsignal) when glibc formatted it into the
 * kernel thread's (`formatted`); else s itself. */
enum own_buffer { OWN_STRERROR, OWN_STRSIGNAL };

static char *own_copy(char *s, bool formatted, enum own_buffer which)
{
    cap__thread_rare *r = formatted && s != NULL && cap__ic_user() ? rare_of(cap__current())
                                                                   : NULL;
    if (r == NULL) /* a fixed message, not a user thread, or no memory */
        return s;
    char *mine = which == OWN_STRERROR ? r->strerror : r->strsignal;
    snprintf(mine, sizeof r->strerror, "%s", s);
    return mine;
}
_Static_assert(sizeof((cap__thread_rare *)0)->strerror ==
                   sizeof((cap__thread_rare *)0)->strsignal,
               "own_copy bounds both by one size");

/* strerror and strerror_l format a number with no message of glibc's
 * (strerrordesc_np is NULL for it) into the kernel thread's buffer. */
char *strerror(int errnum)
{
    return own_copy(CAP__REAL(strerror)(errnum), strerrordesc_np(errnum) == NULL, OWN_STRERROR);
}

char *strerror_l(int errnum, locale_t loc)
{
    return own_copy(CAP__REAL(strerror_l)(errnum, loc), strerrordesc_np(errnum) == NULL,
                    OWN_STRERROR);
}

/* strsignal: likewise a signal with no description of glibc's
 * (sigdescr_np is NULL for it: the real-time ones, numbers above
 * them). */
char *strsignal(int sig)
{
    return own_copy(CAP__REAL(strsignal)(sig), sigdescr_np(sig) == NULL, OWN_STRSIGNAL);
}

/* worker.h; on the main kernel thread first, before any other worker. */
void **cap__dl_error_slot(void)
{
    static void *none; /* never set: nothing moves it */
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
    return found ? (void **)((char *)__builtin_thread_pointer() + tp_offset) : &none;
}

/* worker.h; after the thread's holds are taken again: a result found on
 * w (no thread's) is freed through glibc's dlerror, whose allocator may
 * park the thread (an interposed malloc's mutex). */
void cap__dl_error_put_back(cap__worker *w, void *result)
{
    if (*w->dlerror_slot != NULL) { /* no thread's: a handler's on the scheduler context */
        dispose(w->dlerror_slot);
        w = cap__current()->worker; /* a park there may have moved the thread */
    }
    *w->dlerror_slot = result;
}

/* thread.h */
void cap__libc_tls_exit(cap__thread *self)
{
    void **slot = self->worker->dlerror_slot;
    if (*slot != NULL)
        dispose(slot);
    cap__thread_rare *r = self->rare;
    if (r == NULL || r->locale == NULL)
        return;
    cap__held_remove(&r->held);
    r->locale = NULL;
    real_uselocale(LC_GLOBAL_LOCALE);
}

/* intercept.h */
void cap__libc_tls_forked(void)
{
    cap__thread *self = cap__current();
    if (self != NULL && self->rare != NULL && self->rare->locale != NULL)
        hold(self->rare); /* the list was forgotten */
}

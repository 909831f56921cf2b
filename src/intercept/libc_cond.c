/* SPDX-License-Identifier: MIT */
/*
 * glibc's pthread_cond_t and pthread_once_t (and C11's once_flag), for
 * every thread: here the object's storage holds our own (see
 * libc_sync.h for why user threads need this).
 *
 * Condition variables: glibc's wait releases the mutex with its internal
 * unlock, which no wrapper sees: a user thread parked on that mutex would
 * never be woken. So the condition variable is ours for every caller: a
 * cap_cond_t lives at the start of the pthread_cond_t (all zeros, as
 * PTHREAD_COND_INITIALIZER leaves it, is a valid one on CLOCK_REALTIME),
 * and the wait is src/sync/cond.c's with glibc's mutex
 * (cap__libc_mutex_ops). A user thread parks; a thread the library does
 * not run sleeps in the kernel on the same word (sched/park.h). glibc's
 * fields past ours are not touched, except that pthread_cond_init leaves
 * glibc's flag word (__wrefs) as glibc sets it: a process-shared
 * condition variable (flag 1 there) stays entirely glibc's, since another
 * process may use it with glibc's code (its wait sleeps the worker; the
 * mutex is lent to it under glibc's holder id, cap__libc_mutex_lend).
 *
 * Once controls: glibc's pthread_once sleeps on the control word until
 * the first caller's init returns; if that caller is a user thread parked
 * inside init, a user thread of the same worker waiting there blocks the
 * worker. cap_once (thread/once.c) uses the same word with the same
 * values (0 new, 2 done, odd while running), so it takes glibc's place
 * for every caller.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <threads.h>

#include "intercept/intercept.h"
#include "intercept/libc_sync.h"
#include "thread/thread.h"

enum { COND_SHARED = 1 }; /* glibc's __wrefs flag for a process-shared one */

_Static_assert(sizeof(cap_cond_t) <= offsetof(pthread_cond_t, __data.__wrefs),
               "cap_cond_t fits before glibc's flags");
_Static_assert(_Alignof(pthread_cond_t) >= _Alignof(cap_cond_t), "alignment");
_Static_assert(sizeof(pthread_once_t) == sizeof(cap_once_t), "once control");
_Static_assert(sizeof(once_flag) == sizeof(cap_once_t), "C11 once flag");

static cap_cond_t *ours(pthread_cond_t *c)
{
    return (cap_cond_t *)(void *)c;
}

static bool shared(const pthread_cond_t *c)
{
    return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & COND_SHARED) != 0;
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE;
    clockid_t clock = CLOCK_REALTIME;
    if (attr != NULL) {
        pthread_condattr_getpshared(attr, &pshared);
        pthread_condattr_getclock(attr, &clock);
    }
    if (pshared == PTHREAD_PROCESS_SHARED)
        return CAP__REAL(pthread_cond_init)(c, attr);
    memset(c, 0, sizeof *c);
    cap_condattr_t cattr;
    cap_condattr_init(&cattr);
    cap_condattr_setclock(&cattr, clock); /* glibc's attr holds only the two */
    return cap_cond_init(ours(c), &cattr);
}

int pthread_cond_destroy(pthread_cond_t *c)
{
    if (shared(c))
        return CAP__REAL(pthread_cond_destroy)(c);
    return cap_cond_destroy(ours(c));
}

int pthread_cond_signal(pthread_cond_t *c)
{
    if (shared(c))
        return CAP__REAL(pthread_cond_signal)(c);
    return cap_cond_signal(ours(c));
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    if (shared(c))
        return CAP__REAL(pthread_cond_broadcast)(c);
    return cap_cond_broadcast(ours(c));
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (shared(c)) {
        bool lent = cap__libc_mutex_lend(m);
        int rc = CAP__REAL(pthread_cond_wait)(c, m);
        if (lent)
            cap__libc_mutex_reclaim(m);
        return rc;
    }
    return cap__cond_wait_with(ours(c), m, &cap__libc_mutex_ops, CLOCK_REALTIME, NULL);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
    if (shared(c)) {
        bool lent = cap__libc_mutex_lend(m);
        int rc = CAP__REAL(pthread_cond_timedwait)(c, m, abs);
        if (lent)
            cap__libc_mutex_reclaim(m);
        return rc;
    }
    return cap__cond_wait_with(ours(c), m, &cap__libc_mutex_ops, ours(c)->clock, abs);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *abs)
{
    if (shared(c)) {
        bool lent = cap__libc_mutex_lend(m);
        int rc = CAP__REAL(pthread_cond_clockwait)(c, m, clock, abs);
        if (lent)
            cap__libc_mutex_reclaim(m);
        return rc;
    }
    return cap__cond_wait_with(ours(c), m, &cap__libc_mutex_ops, clock, abs);
}

/* C11's cnd_t is glibc's pthread_cond_t, reached through glibc's internal
 * names. cnd_init stays glibc's: it leaves the object all zeros, a valid
 * condition variable here on CLOCK_REALTIME, C11's TIME_UTC. */
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t is glibc's condition variable");

static pthread_cond_t *cnd_cond(cnd_t *c)
{
    return (pthread_cond_t *)(void *)c;
}

int cnd_signal(cnd_t *c)
{
    return cap__libc_thrd_result(pthread_cond_signal(cnd_cond(c)));
}

int cnd_broadcast(cnd_t *c)
{
    return cap__libc_thrd_result(pthread_cond_broadcast(cnd_cond(c)));
}

int cnd_wait(cnd_t *c, mtx_t *m)
{
    return cap__libc_thrd_result(pthread_cond_wait(cnd_cond(c), (pthread_mutex_t *)(void *)m));
}

int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abs)
{
    return cap__libc_thrd_result(
        pthread_cond_timedwait(cnd_cond(c), (pthread_mutex_t *)(void *)m, abs));
}

void cnd_destroy(cnd_t *c)
{
    pthread_cond_destroy(cnd_cond(c));
}

/*
 * libstdc++'s std::call_once hands its callable to __once_proxy, the init
 * it gives pthread_once, through two __thread variables it sets just
 * before the call and clears after. A worker's user threads share them:
 * a user thread that waits in the call while another runs init, and then
 * must run init itself (the other one's threw), would find them cleared,
 * or set by a third thread. So a user thread's call with __once_proxy
 * keeps their values from its entry and puts them back on the kernel
 * thread that runs init, just before __once_proxy reads them.
 */
struct cxx_call {
    void (*proxy)(void);
    void *callable;
    void (*call)(void);
};

/* The calling kernel thread's copy of libstdc++'s __thread variable. */
static void *cxx_tls(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

static void cxx_run(void *arg)
{
    struct cxx_call *cc = arg;
    void **callable = cxx_tls("_ZSt15__once_callable");
    void (**call)(void) = cxx_tls("_ZSt11__once_call");
    if (callable != NULL && call != NULL) {
        *callable = cc->callable;
        *call = cc->call;
    }
    cc->proxy();
}

int pthread_once(pthread_once_t *once, void (*init)(void))
{
    cap_once_t *o = (cap_once_t *)(void *)once;
    if (atomic_load_explicit((_Atomic uint32_t *)&o->state, memory_order_acquire) == 2 ||
        !cap__ic_user())
        return cap_once(o, init); /* done already (its fast path), or a kernel thread */
    static void (*_Atomic proxy)(void); /* libstdc++'s __once_proxy, once found */
    void (*p)(void) = atomic_load_explicit(&proxy, memory_order_relaxed);
    if (p == NULL) {
        p = (void (*)(void))dlsym(RTLD_DEFAULT, "__once_proxy");
        atomic_store_explicit(&proxy, p, memory_order_relaxed);
    }
    if (p == NULL || init != p)
        return cap_once(o, init);
    void **callable = cxx_tls("_ZSt15__once_callable");
    void (**call)(void) = cxx_tls("_ZSt11__once_call");
    if (callable == NULL || call == NULL)
        return cap_once(o, init);
    struct cxx_call cc = { p, *callable, *call };
    return cap__once_run(o, cxx_run, &cc);
}

void call_once(once_flag *flag, void (*init)(void))
{
    cap_once((cap_once_t *)(void *)flag, init);
}

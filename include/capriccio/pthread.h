/* SPDX-License-Identifier: MIT */
/*
 * pthread compatibility: an unmodified pthread program, compiled with
 *     cc -include capriccio/pthread.h prog.c -lcapriccio
 * (or including this header in place of <pthread.h> and <semaphore.h>),
 * runs on Capriccio's user-level threads.
 *
 * How: this header first includes the system headers that declare the
 * names it takes over (<pthread.h>, <semaphore.h>, <sched.h>, <signal.h>,
 * <time.h>, <errno.h>), so that when the program includes them later
 * their include guards make that a no-op; then it #defines
 * each name to its cap_ counterpart. So the real declarations stay
 * intact, and every later mention of pthread_mutex_t, pthread_create,
 * PTHREAD_MUTEX_INITIALIZER, sem_wait, errno ... in the program means
 * ours. It includes no <fcntl.h> or <unistd.h> itself, so a program's
 * own function named open (GLib's tests have one) compiles as against
 * <pthread.h>. (Under _GNU_SOURCE, which it defines when no feature-test
 * macro is set, glibc's <signal.h> includes <unistd.h>: a function of
 * the program's named read then conflicts, as it would beside <signal.h>.)
 * Names with no exact cap_ twin map to the static inline shims below
 * (spelled __inline__, C89 having no inline; the header is plain C89 and
 * C++98 throughout, docs/pthread-compat.md, "Language modes"). Every
 * pthread name of glibc's <pthread.h> is mapped: one left to glibc would
 * receive our handles and types and misbehave.
 *
 *  - errno becomes (*cap_errno_location()), which is not declared const
 *    the way glibc's __errno_location is, so the compiler cannot keep its
 *    address across a call in which the thread may move to another worker
 *    (DESIGN.md, "Migration and TLS").
 *  - sem_* keep their libc convention (-1 and errno); the cap_sem_*
 *    functions return error numbers like the rest of the API.
 *  - sched_yield yields only the calling user thread. sleep, usleep,
 *    nanosleep and clock_nanosleep are not renamed: the library defines
 *    those libc names itself (src/intercept/sleep.c), so they park only
 *    the calling user thread and a caught signal interrupts them, as it
 *    does every blocking call the library intercepts.
 *  - pthread_atfork is cap_atfork: the handlers run in the library's
 *    fork (fork, vfork and daemon; not posix_spawn, popen or system, as
 *    in glibc), prepare handlers before the runtime's own fork steps,
 *    child handlers after the child's runtime is set up, so they may lock
 *    and unlock mutexes and create threads. Handlers that code not
 *    compiled through this header (a library) registers with glibc's
 *    pthread_atfork run inside glibc's fork: after these prepare handlers,
 *    before these parent and child handlers.
 *  - Feature-test macros: the system headers above fix the feature set of
 *    the whole translation unit, and a forced include comes before the
 *    program's own "#define _POSIX_C_SOURCE ...". So when no feature-test
 *    macro is defined yet, this header defines _GNU_SOURCE as 1
 *    (everything visible; the value autoconf's config.h gives it, so its
 *    definition there is not a redefinition). A program that needs the
 *    strict variants (the XSI strerror_r, say) should pass its macro on
 *    the command line.
 *
 * Not supported; each fails with the error POSIX gives for an unsupported
 * value (docs/pthread-compat.md has the full list and the reasons):
 *  (Process-shared objects work, between processes built with this
 *  header: *_setpshared(PTHREAD_PROCESS_SHARED), sem_init with pshared
 *  and the named semaphores of sem_open, which NPTL processes can share.)
 *  - real-time scheduling: SCHED_FIFO/SCHED_RR and nonzero priorities:
 *    ENOTSUP / EINVAL; PTHREAD_SCOPE_SYSTEM: ENOTSUP (threads are M:N);
 *    priority-inheritance/-protection and robust mutexes: ENOTSUP;
 *  - asynchronous cancellation acts like deferred (<capriccio/cancel.h>);
 *  - GNU extensions with no user-level meaning (affinity): ENOSYS
 *    (pthread_tryjoin_np, pthread_timedjoin_np, pthread_clockjoin_np,
 *    pthread_attr_{set,get}sigmask_np and pthread_{set,get}attr_default_np
 *    work);
 *    pthread_getcpuclockid: ENOENT;
 *  - pthread_attr_setstack: the size is honoured, the memory is not used
 *    (each thread runs on a stack of the library's).
 * C11 <threads.h>: thrd_create makes user threads too (and thrd_join,
 * thrd_detach, thrd_exit, thrd_current, thrd_equal follow); C only, and
 * not with -DCAP_NO_C11_THREADS. The header does not include
 * <threads.h> (nor so define thread_local); its declarations match the
 * ones <threads.h> makes when the program includes it.
 */
#ifndef CAPRICCIO_PTHREAD_H
#define CAPRICCIO_PTHREAD_H

/* Build systems pass CFLAGS to the compiler when it preprocesses an
 * assembly file (.S) too, so a forced include reaches the assembler; C
 * declarations there are syntax errors. Nothing here means anything to
 * assembly, so it sees an empty header. */
#ifndef __ASSEMBLER__

#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE) && !defined(_SVID_SOURCE)
/* With the value autoconf's confdefs.h and config.h give it ("#define
 * _GNU_SOURCE 1", AC_USE_SYSTEM_EXTENSIONS), as -D_GNU_SOURCE and g++ do:
 * their later definition is then no redefinition, which -Werror turned
 * into failed configure checks. It stays defined, because programs test
 * it themselves (the XSI strerror_r test "!_GNU_SOURCE" of its manual). */
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if !defined(__cplusplus) && !defined(__STDC_NO_THREADS__) && !defined(CAP_NO_C11_THREADS)
/* Not <threads.h>: it defines thread_local as a macro, which a program
 * that does not include it may use as a name (git's index-pack has a
 * struct thread_local). The thrd_* declarations below use the types it
 * would give (__thrd_t, which <pthread.h> brings in), so when the
 * program includes it, its declarations match ours. */
#define CAP_COMPAT_C11_THREADS 1
#endif

#include "../capriccio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errno ------------------------------------------------------------ */

int *cap_errno_location(void); /* not const, on purpose */
#undef errno
#define errno (*cap_errno_location())

/* ---- shims (defined before the renames, so they see the real names) --- */

int cap_compat_setconcurrency(int level);
int cap_compat_getconcurrency(void);
void cap_compat_setdefault_rest(size_t guard_size, int inherit);
void cap_compat_getdefault_rest(size_t *guard_size, int *inherit);

/* -1 and errno, the libc convention, from an error number. */
static __inline__ int cap_compat_ret(int err)
{
    if (err == 0)
        return 0;
    errno = err;
    return -1;
}

/* 0 if t names a live or unjoined thread, else ESRCH. */
static __inline__ int cap_compat_alive(cap_thread_t t)
{
    char name[CAP_THREAD_NAME_MAX];
    return cap_thread_getname(t, name, sizeof name) == ESRCH ? ESRCH : 0;
}

/* Thread attributes: ours plus what pthread_attr_t can carry besides. */
typedef struct cap_compat_attr {
    cap_thread_attr_t cap;
    size_t guard_size;
    void *stack_addr;
    int scope, inherit, policy, priority;
} cap_compat_attr_t;

static __inline__ int cap_compat_attr_init(cap_compat_attr_t *a)
{
    int rc = cap_thread_attr_init(&a->cap);
    a->guard_size = 4096;
    a->stack_addr = NULL;
    a->scope = PTHREAD_SCOPE_PROCESS;
    a->inherit = PTHREAD_INHERIT_SCHED;
    a->policy = SCHED_OTHER;
    a->priority = 0;
    return rc;
}

static __inline__ int cap_compat_attr_destroy(cap_compat_attr_t *a)
{
    return cap_thread_attr_destroy(&a->cap);
}

static __inline__ int cap_compat_attr_setsigmask_np(cap_compat_attr_t *a, const sigset_t *set)
{
    return cap_thread_attr_setsigmask(&a->cap, set);
}

static __inline__ int cap_compat_attr_getsigmask_np(const cap_compat_attr_t *a, sigset_t *set)
{
    return cap_thread_attr_getsigmask(&a->cap, set);
}
#if defined(PTHREAD_ATTR_NO_SIGMASK_NP) && !defined(__cplusplus)
_Static_assert(PTHREAD_ATTR_NO_SIGMASK_NP == CAP_ATTR_NO_SIGMASK, "no mask set");
#endif

static __inline__ int cap_compat_create(cap_thread_t *t, const cap_compat_attr_t *a,
                                    void *(*start)(void *), void *arg)
{
    return cap_thread_create(t, a != NULL ? &a->cap : NULL, start, arg);
}

static __inline__ int cap_compat_attr_setdetachstate(cap_compat_attr_t *a, int s)
{
    return cap_thread_attr_setdetachstate(&a->cap, s);
}

static __inline__ int cap_compat_attr_getdetachstate(const cap_compat_attr_t *a, int *s)
{
    return cap_thread_attr_getdetachstate(&a->cap, s);
}

static __inline__ int cap_compat_attr_setstacksize(cap_compat_attr_t *a, size_t size)
{
    return cap_thread_attr_setstacksize(&a->cap, size);
}

static __inline__ int cap_compat_attr_getstacksize(const cap_compat_attr_t *a, size_t *size)
{
    return cap_thread_attr_getstacksize(&a->cap, size);
}

static __inline__ int cap_compat_attr_setstack(cap_compat_attr_t *a, void *addr, size_t size)
{
    int rc = cap_thread_attr_setstacksize(&a->cap, size);
    if (rc == 0)
        a->stack_addr = addr;
    return rc;
}

static __inline__ int cap_compat_attr_getstack(const cap_compat_attr_t *a, void **addr,
                                           size_t *size)
{
    *addr = a->stack_addr;
    return cap_thread_attr_getstacksize(&a->cap, size);
}

static __inline__ int cap_compat_attr_setstackaddr(cap_compat_attr_t *a, void *addr)
{
    a->stack_addr = addr;
    return 0;
}

static __inline__ int cap_compat_attr_getstackaddr(const cap_compat_attr_t *a, void **addr)
{
    *addr = a->stack_addr;
    return 0;
}

static __inline__ int cap_compat_attr_setguardsize(cap_compat_attr_t *a, size_t size)
{
    a->guard_size = size;
    return 0;
}

static __inline__ int cap_compat_attr_getguardsize(const cap_compat_attr_t *a, size_t *size)
{
    *size = a->guard_size;
    return 0;
}

static __inline__ int cap_compat_attr_setscope(cap_compat_attr_t *a, int scope)
{
    if (scope == PTHREAD_SCOPE_SYSTEM)
        return ENOTSUP;
    if (scope != PTHREAD_SCOPE_PROCESS)
        return EINVAL;
    a->scope = scope;
    return 0;
}

static __inline__ int cap_compat_attr_getscope(const cap_compat_attr_t *a, int *scope)
{
    *scope = a->scope;
    return 0;
}

static __inline__ int cap_compat_attr_setinheritsched(cap_compat_attr_t *a, int inherit)
{
    if (inherit != PTHREAD_INHERIT_SCHED && inherit != PTHREAD_EXPLICIT_SCHED)
        return EINVAL;
    a->inherit = inherit;
    return 0;
}

static __inline__ int cap_compat_attr_getinheritsched(const cap_compat_attr_t *a, int *inherit)
{
    *inherit = a->inherit;
    return 0;
}

/* SCHED_OTHER only; real-time policies are refused. */
static __inline__ int cap_compat_policy_check(int policy)
{
    if (policy == SCHED_FIFO || policy == SCHED_RR)
        return ENOTSUP;
    return policy == SCHED_OTHER ? 0 : EINVAL;
}

static __inline__ int cap_compat_attr_setschedpolicy(cap_compat_attr_t *a, int policy)
{
    int rc = cap_compat_policy_check(policy);
    if (rc == 0)
        a->policy = policy;
    return rc;
}

static __inline__ int cap_compat_attr_getschedpolicy(const cap_compat_attr_t *a, int *policy)
{
    *policy = a->policy;
    return 0;
}

static __inline__ int cap_compat_attr_setschedparam(cap_compat_attr_t *a,
                                                const struct sched_param *p)
{
    if (p->sched_priority != 0)
        return EINVAL; /* SCHED_OTHER has the single priority 0 */
    a->priority = 0;
    return 0;
}

static __inline__ int cap_compat_attr_getschedparam(const cap_compat_attr_t *a,
                                                struct sched_param *p)
{
    p->sched_priority = a->priority;
    return 0;
}

/* The thread's own stack, stack size and detach state; the rest as set
 * by pthread_attr_init (scope process, guard size one page). */
static __inline__ int cap_compat_getattr_np(cap_thread_t t, cap_compat_attr_t *a)
{
    size_t size;
    int rc;
    cap_compat_attr_init(a);
    rc = cap_thread_getattr(t, &a->cap);
    return rc != 0 ? rc : cap_thread_getstack(t, &a->stack_addr, &size);
}

/* The process's default attributes (pthread_setattr_default_np): ours in
 * the library (cap_thread_attr_setdefault), and the two parts of the
 * rest that can take more than one value, the guard size and the
 * inherit-scheduler flag, beside them (src/compat/compat.c); a stack
 * address is refused, as glibc does. */
static __inline__ int cap_compat_setattr_default_np(const cap_compat_attr_t *a)
{
    int rc;
    if (a->stack_addr != NULL)
        return EINVAL;
    rc = cap_thread_attr_setdefault(&a->cap);
    if (rc == 0)
        cap_compat_setdefault_rest(a->guard_size, a->inherit);
    return rc;
}

static __inline__ int cap_compat_getattr_default_np(cap_compat_attr_t *a)
{
    cap_compat_attr_init(a);
    cap_compat_getdefault_rest(&a->guard_size, &a->inherit);
    return cap_thread_attr_getdefault(&a->cap);
}

static __inline__ int cap_compat_setschedparam(cap_thread_t t, int policy,
                                           const struct sched_param *p)
{
    int rc = cap_compat_alive(t);
    if (rc == 0)
        rc = cap_compat_policy_check(policy);
    if (rc == 0 && p->sched_priority != 0)
        rc = EINVAL;
    return rc;
}

static __inline__ int cap_compat_getschedparam(cap_thread_t t, int *policy, struct sched_param *p)
{
    int rc = cap_compat_alive(t);
    if (rc == 0) {
        *policy = SCHED_OTHER;
        p->sched_priority = 0;
    }
    return rc;
}

static __inline__ int cap_compat_setschedprio(cap_thread_t t, int prio)
{
    int rc = cap_compat_alive(t);
    return rc != 0 ? rc : prio != 0 ? EINVAL : 0;
}

static __inline__ int cap_compat_getcpuclockid(cap_thread_t t, clockid_t *clock)
{
    int rc = cap_compat_alive(t);
    (void)clock;
    return rc != 0 ? rc : ENOENT;
}

static __inline__ int cap_compat_enosys(void)
{
    return ENOSYS;
}

static __inline__ int cap_compat_mutex_prioceiling(const cap_mutex_t *m, ...)
{
    (void)m;
    return EINVAL; /* never PTHREAD_PRIO_PROTECT */
}

/* rwlock kinds: glibc's three onto our two. */
static __inline__ int cap_compat_rwlockattr_setkind(cap_rwlockattr_t *a, int kind)
{
    if (kind == PTHREAD_RWLOCK_PREFER_READER_NP)
        return cap_rwlockattr_setkind(a, CAP_RWLOCK_PREFER_READER);
    if (kind == PTHREAD_RWLOCK_PREFER_WRITER_NP ||
        kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
        return cap_rwlockattr_setkind(a, CAP_RWLOCK_PREFER_WRITER);
    return EINVAL;
}

static __inline__ int cap_compat_rwlockattr_getkind(const cap_rwlockattr_t *a, int *kind)
{
    int k;
    int rc = cap_rwlockattr_getkind(a, &k);
    if (rc == 0)
        *kind = k == CAP_RWLOCK_PREFER_READER ? PTHREAD_RWLOCK_PREFER_READER_NP
                                              : PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
    return rc;
}

/* Unnamed semaphores, libc convention. */
static __inline__ int cap_compat_sem_init(cap_sem_t *s, int pshared, unsigned value)
{
    return cap_compat_ret(cap_sem_init(s, pshared, value));
}

static __inline__ int cap_compat_sem_destroy(cap_sem_t *s)
{
    return cap_compat_ret(cap_sem_destroy(s));
}

static __inline__ int cap_compat_sem_wait(cap_sem_t *s)
{
    return cap_compat_ret(cap_sem_wait(s));
}

static __inline__ int cap_compat_sem_trywait(cap_sem_t *s)
{
    return cap_compat_ret(cap_sem_trywait(s));
}

static __inline__ int cap_compat_sem_timedwait(cap_sem_t *s, const struct timespec *abs)
{
    return cap_compat_ret(cap_sem_timedwait(s, abs));
}

static __inline__ int cap_compat_sem_clockwait(cap_sem_t *s, clockid_t clock,
                                           const struct timespec *abs)
{
    return cap_compat_ret(cap_sem_clockwait(s, clock, abs));
}

static __inline__ int cap_compat_sem_post(cap_sem_t *s)
{
    return cap_compat_ret(cap_sem_post(s));
}

static __inline__ int cap_compat_sem_getvalue(cap_sem_t *s, int *value)
{
    return cap_compat_ret(cap_sem_getvalue(s, value));
}

/* Named semaphores: mode and value follow oflag only with O_CREAT, as in
 * sem_open(3); SEM_FAILED is a null pointer. Out of line (src/compat),
 * so that this header needs neither <fcntl.h> nor <stdarg.h>. */
cap_sem_t *cap_compat_sem_open(const char *name, int oflag, ...);

static __inline__ int cap_compat_sem_close(cap_sem_t *s)
{
    return cap_compat_ret(cap_sem_close(s));
}

static __inline__ int cap_compat_sem_unlink(const char *name)
{
    return cap_compat_ret(cap_sem_unlink(name));
}

#ifdef __cplusplus
}
#endif

/* ---- the renames -------------------------------------------------------- */

/* Types. */
#define pthread_t cap_thread_t
#define pthread_attr_t cap_compat_attr_t
#define pthread_mutex_t cap_mutex_t
#define pthread_mutexattr_t cap_mutexattr_t
#define pthread_cond_t cap_cond_t
#define pthread_condattr_t cap_condattr_t
#define pthread_rwlock_t cap_rwlock_t
#define pthread_rwlockattr_t cap_rwlockattr_t
#define pthread_barrier_t cap_barrier_t
#define pthread_barrierattr_t cap_barrierattr_t
#define pthread_spinlock_t cap_spin_t
#define pthread_key_t cap_key_t
#define pthread_once_t cap_once_t
#define sem_t cap_sem_t

/* Initializers and constants whose values differ, or that are ours. */
#undef PTHREAD_MUTEX_INITIALIZER
#define PTHREAD_MUTEX_INITIALIZER CAP_MUTEX_INITIALIZER
#undef PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
#define PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP CAP_MUTEX_RECURSIVE_INITIALIZER
#undef PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP
#define PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP CAP_MUTEX_ERRORCHECK_INITIALIZER
#undef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
#define PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP CAP_MUTEX_INITIALIZER
#undef PTHREAD_COND_INITIALIZER
#define PTHREAD_COND_INITIALIZER CAP_COND_INITIALIZER
#undef PTHREAD_RWLOCK_INITIALIZER
#define PTHREAD_RWLOCK_INITIALIZER CAP_RWLOCK_INITIALIZER
#undef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#define PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP CAP_RWLOCK_INITIALIZER
#undef PTHREAD_ONCE_INIT
#define PTHREAD_ONCE_INIT CAP_ONCE_INIT
#undef PTHREAD_CANCELED
#define PTHREAD_CANCELED CAP_CANCELED
#undef PTHREAD_BARRIER_SERIAL_THREAD
#define PTHREAD_BARRIER_SERIAL_THREAD CAP_BARRIER_SERIAL_THREAD
/* glibc's mutex kinds are enumerators; these macros shadow them. */
#define PTHREAD_MUTEX_NORMAL CAP_MUTEX_NORMAL
#define PTHREAD_MUTEX_RECURSIVE CAP_MUTEX_RECURSIVE
#define PTHREAD_MUTEX_ERRORCHECK CAP_MUTEX_ERRORCHECK
#define PTHREAD_MUTEX_DEFAULT CAP_MUTEX_DEFAULT
#define PTHREAD_MUTEX_TIMED_NP CAP_MUTEX_NORMAL
#define PTHREAD_MUTEX_RECURSIVE_NP CAP_MUTEX_RECURSIVE
#define PTHREAD_MUTEX_ERRORCHECK_NP CAP_MUTEX_ERRORCHECK
#define PTHREAD_MUTEX_ADAPTIVE_NP CAP_MUTEX_NORMAL
/* These are equal in value already; checked, not renamed. */
#ifndef __cplusplus
_Static_assert(PTHREAD_PROCESS_PRIVATE == CAP_PROCESS_PRIVATE, "pshared values");
_Static_assert(PTHREAD_PROCESS_SHARED == CAP_PROCESS_SHARED, "pshared values");
_Static_assert(PTHREAD_PRIO_NONE == CAP_PRIO_NONE && PTHREAD_PRIO_INHERIT == CAP_PRIO_INHERIT &&
               PTHREAD_PRIO_PROTECT == CAP_PRIO_PROTECT, "protocol values");
_Static_assert(PTHREAD_MUTEX_STALLED == CAP_MUTEX_STALLED &&
               PTHREAD_MUTEX_ROBUST == CAP_MUTEX_ROBUST, "robustness values");
_Static_assert(PTHREAD_CANCEL_ENABLE == CAP_CANCEL_ENABLE &&
               PTHREAD_CANCEL_DISABLE == CAP_CANCEL_DISABLE &&
               PTHREAD_CANCEL_DEFERRED == CAP_CANCEL_DEFERRED &&
               PTHREAD_CANCEL_ASYNCHRONOUS == CAP_CANCEL_ASYNCHRONOUS, "cancel values");
_Static_assert(PTHREAD_CREATE_JOINABLE == CAP_CREATE_JOINABLE &&
               PTHREAD_CREATE_DETACHED == CAP_CREATE_DETACHED, "detach values");
_Static_assert(SEM_VALUE_MAX == CAP_SEM_VALUE_MAX, "semaphore limit");
#endif

/* Threads. */
#define pthread_create cap_compat_create
#define pthread_join cap_thread_join
#define pthread_detach cap_thread_detach
#define pthread_exit cap_thread_exit
#define pthread_self cap_thread_self
#define pthread_equal cap_thread_equal
#define pthread_yield cap_yield
#define sched_yield cap_yield
#define pthread_setname_np cap_thread_setname
#define pthread_getname_np cap_thread_getname
#define pthread_getattr_np cap_compat_getattr_np
#define pthread_setschedparam cap_compat_setschedparam
#define pthread_getschedparam cap_compat_getschedparam
#define pthread_setschedprio cap_compat_setschedprio
#define pthread_getcpuclockid cap_compat_getcpuclockid
#define pthread_setconcurrency cap_compat_setconcurrency
#define pthread_getconcurrency cap_compat_getconcurrency
#define pthread_kill cap_thread_kill
#define pthread_sigqueue cap_thread_sigqueue
#define pthread_atfork cap_atfork
#ifdef CAP_COMPAT_C11_THREADS
/* C11 threads (src/compat/threads.c). */
int cap_compat_thrd_create(__thrd_t *thr, int (*func)(void *), void *arg);
int cap_compat_thrd_join(__thrd_t thr, int *res);
int cap_compat_thrd_detach(__thrd_t thr);
CAP_NORETURN void cap_compat_thrd_exit(int res);
#define thrd_create cap_compat_thrd_create
#define thrd_join cap_compat_thrd_join
#define thrd_detach cap_compat_thrd_detach
#define thrd_exit cap_compat_thrd_exit
#define thrd_current cap_thread_self
#define thrd_equal cap_thread_equal
#endif
#define pthread_tryjoin_np cap_thread_tryjoin
#define pthread_timedjoin_np(thread, retval, abstime) \
    cap_thread_clockjoin(thread, retval, CLOCK_REALTIME, abstime)
#define pthread_clockjoin_np cap_thread_clockjoin
#define pthread_setaffinity_np(thread, size, set) cap_compat_enosys()
#define pthread_getaffinity_np(thread, size, set) cap_compat_enosys()
#define pthread_getattr_default_np cap_compat_getattr_default_np
#define pthread_setattr_default_np cap_compat_setattr_default_np

/* Thread attributes. */
#define pthread_attr_init cap_compat_attr_init
#define pthread_attr_destroy cap_compat_attr_destroy
#define pthread_attr_setdetachstate cap_compat_attr_setdetachstate
#define pthread_attr_getdetachstate cap_compat_attr_getdetachstate
#define pthread_attr_setstacksize cap_compat_attr_setstacksize
#define pthread_attr_getstacksize cap_compat_attr_getstacksize
#define pthread_attr_setstack cap_compat_attr_setstack
#define pthread_attr_getstack cap_compat_attr_getstack
#define pthread_attr_setstackaddr cap_compat_attr_setstackaddr
#define pthread_attr_getstackaddr cap_compat_attr_getstackaddr
#define pthread_attr_setguardsize cap_compat_attr_setguardsize
#define pthread_attr_getguardsize cap_compat_attr_getguardsize
#define pthread_attr_setscope cap_compat_attr_setscope
#define pthread_attr_getscope cap_compat_attr_getscope
#define pthread_attr_setinheritsched cap_compat_attr_setinheritsched
#define pthread_attr_getinheritsched cap_compat_attr_getinheritsched
#define pthread_attr_setschedpolicy cap_compat_attr_setschedpolicy
#define pthread_attr_getschedpolicy cap_compat_attr_getschedpolicy
#define pthread_attr_setschedparam cap_compat_attr_setschedparam
#define pthread_attr_getschedparam cap_compat_attr_getschedparam
#define pthread_attr_setaffinity_np(attr, size, set) cap_compat_enosys()
#define pthread_attr_getaffinity_np(attr, size, set) cap_compat_enosys()
#define pthread_attr_setsigmask_np cap_compat_attr_setsigmask_np
#define pthread_attr_getsigmask_np cap_compat_attr_getsigmask_np

/* Cancellation. */
#define pthread_cancel cap_thread_cancel
#define pthread_setcancelstate cap_thread_setcancelstate
#define pthread_setcanceltype cap_thread_setcanceltype
#define pthread_testcancel cap_testcancel
#undef pthread_cleanup_push
#define pthread_cleanup_push(routine, arg) cap_cleanup_push(routine, arg)
#undef pthread_cleanup_pop
#define pthread_cleanup_pop(execute) cap_cleanup_pop(execute)
#undef pthread_cleanup_push_defer_np
#define pthread_cleanup_push_defer_np(routine, arg) cap_cleanup_push(routine, arg)
#undef pthread_cleanup_pop_restore_np
#define pthread_cleanup_pop_restore_np(execute) cap_cleanup_pop(execute)

/* Once and keys. */
#define pthread_once cap_once
#define pthread_key_create cap_key_create
#define pthread_key_delete cap_key_delete
#define pthread_getspecific cap_getspecific
#define pthread_setspecific cap_setspecific

/* Mutexes. */
#define pthread_mutex_init cap_mutex_init
#define pthread_mutex_destroy cap_mutex_destroy
#define pthread_mutex_lock cap_mutex_lock
#define pthread_mutex_trylock cap_mutex_trylock
#define pthread_mutex_timedlock cap_mutex_timedlock
#define pthread_mutex_clocklock cap_mutex_clocklock
#define pthread_mutex_unlock cap_mutex_unlock
#define pthread_mutex_consistent cap_mutex_consistent
#define pthread_mutex_consistent_np cap_mutex_consistent
#define pthread_mutex_getprioceiling cap_compat_mutex_prioceiling
#define pthread_mutex_setprioceiling cap_compat_mutex_prioceiling
#define pthread_mutexattr_init cap_mutexattr_init
#define pthread_mutexattr_destroy cap_mutexattr_destroy
#define pthread_mutexattr_settype cap_mutexattr_settype
#define pthread_mutexattr_gettype cap_mutexattr_gettype
#define pthread_mutexattr_setpshared cap_mutexattr_setpshared
#define pthread_mutexattr_getpshared cap_mutexattr_getpshared
#define pthread_mutexattr_setprotocol cap_mutexattr_setprotocol
#define pthread_mutexattr_getprotocol cap_mutexattr_getprotocol
#define pthread_mutexattr_setprioceiling cap_mutexattr_setprioceiling
#define pthread_mutexattr_getprioceiling cap_mutexattr_getprioceiling
#define pthread_mutexattr_setrobust cap_mutexattr_setrobust
#define pthread_mutexattr_getrobust cap_mutexattr_getrobust
#define pthread_mutexattr_setrobust_np cap_mutexattr_setrobust
#define pthread_mutexattr_getrobust_np cap_mutexattr_getrobust

/* Condition variables. */
#define pthread_cond_init cap_cond_init
#define pthread_cond_destroy cap_cond_destroy
#define pthread_cond_signal cap_cond_signal
#define pthread_cond_broadcast cap_cond_broadcast
#define pthread_cond_wait cap_cond_wait
#define pthread_cond_timedwait cap_cond_timedwait
#define pthread_cond_clockwait cap_cond_clockwait
#define pthread_condattr_init cap_condattr_init
#define pthread_condattr_destroy cap_condattr_destroy
#define pthread_condattr_setpshared cap_condattr_setpshared
#define pthread_condattr_getpshared cap_condattr_getpshared
#define pthread_condattr_setclock cap_condattr_setclock
#define pthread_condattr_getclock cap_condattr_getclock

/* Read-write locks. */
#define PTHREAD_RWLOCK_PREFER_READER_NP 0
#define PTHREAD_RWLOCK_PREFER_WRITER_NP 1
#define PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP 2
#define PTHREAD_RWLOCK_DEFAULT_NP PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
#define pthread_rwlock_init cap_rwlock_init
#define pthread_rwlock_destroy cap_rwlock_destroy
#define pthread_rwlock_rdlock cap_rwlock_rdlock
#define pthread_rwlock_tryrdlock cap_rwlock_tryrdlock
#define pthread_rwlock_timedrdlock cap_rwlock_timedrdlock
#define pthread_rwlock_clockrdlock cap_rwlock_clockrdlock
#define pthread_rwlock_wrlock cap_rwlock_wrlock
#define pthread_rwlock_trywrlock cap_rwlock_trywrlock
#define pthread_rwlock_timedwrlock cap_rwlock_timedwrlock
#define pthread_rwlock_clockwrlock cap_rwlock_clockwrlock
#define pthread_rwlock_unlock cap_rwlock_unlock
#define pthread_rwlockattr_init cap_rwlockattr_init
#define pthread_rwlockattr_destroy cap_rwlockattr_destroy
#define pthread_rwlockattr_setpshared cap_rwlockattr_setpshared
#define pthread_rwlockattr_getpshared cap_rwlockattr_getpshared
#define pthread_rwlockattr_setkind_np cap_compat_rwlockattr_setkind
#define pthread_rwlockattr_getkind_np cap_compat_rwlockattr_getkind

/* Barriers and spin locks. */
#define pthread_barrier_init cap_barrier_init
#define pthread_barrier_destroy cap_barrier_destroy
#define pthread_barrier_wait cap_barrier_wait
#define pthread_barrierattr_init cap_barrierattr_init
#define pthread_barrierattr_destroy cap_barrierattr_destroy
#define pthread_barrierattr_setpshared cap_barrierattr_setpshared
#define pthread_barrierattr_getpshared cap_barrierattr_getpshared
#define pthread_spin_init cap_spin_init
#define pthread_spin_destroy cap_spin_destroy
#define pthread_spin_lock cap_spin_lock
#define pthread_spin_trylock cap_spin_trylock
#define pthread_spin_unlock cap_spin_unlock

/* Semaphores. */
#define sem_init cap_compat_sem_init
#define sem_destroy cap_compat_sem_destroy
#define sem_wait cap_compat_sem_wait
#define sem_trywait cap_compat_sem_trywait
#define sem_timedwait cap_compat_sem_timedwait
#define sem_clockwait cap_compat_sem_clockwait
#define sem_post cap_compat_sem_post
#define sem_getvalue cap_compat_sem_getvalue
#define sem_open cap_compat_sem_open
#define sem_close cap_compat_sem_close
#define sem_unlink cap_compat_sem_unlink

#endif /* !__ASSEMBLER__ */

#endif /* CAPRICCIO_PTHREAD_H */

/* SPDX-License-Identifier: MIT */
/*
 * Capriccio: user-level threads for Linux servers.
 *
 * The whole public API. Threads are opaque 64-bit handles; every function
 * mirrors its pthread counterpart and returns 0 or a positive error number
 * exactly as POSIX specifies, so <capriccio/pthread.h> is a pure rename.
 *
 * No init call is needed: the library sets itself up before main() and
 * main() runs as a user thread. The process exits when main returns.
 * Settings come from the environment (CAP_WORKERS, CAP_STACK_SIZE,
 * CAP_SCHED, CAP_MIGRATE); see README.md.
 */
#ifndef CAPRICCIO_H
#define CAPRICCIO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
/* The POSIX types of the prototypes below, declared whatever the feature
 * macros: a C89 program (-ansi) gets none of them from <signal.h> and
 * <time.h>. union sigval is glibc's __sigval_t in every mode. */
#include <bits/types/__sigval_t.h>
#include <bits/types/clockid_t.h>
#include <bits/types/sigset_t.h>
#include <bits/types/struct_timespec.h>

/* A function that does not return, in every language mode a program may
 * read the header in (C89 to C23, C++98 on; GCC and Clang): _Noreturn is
 * C11's, [[noreturn]] C++11's. */
#define CAP_NORETURN __attribute__((__noreturn__))

#ifdef __cplusplus
extern "C" {
#endif

/* ---- threads ---------------------------------------------------------- */

/* A thread handle. 0 is never a valid handle. A handle stays unique for the
 * life of the process: a stale handle (a joined or finished detached
 * thread) is reported as ESRCH, never mistaken for a newer thread. */
typedef uint64_t cap_thread_t;

#define CAP_THREAD_NAME_MAX 16 /* bytes, including the terminating NUL */

#define CAP_CREATE_JOINABLE 0
#define CAP_CREATE_DETACHED 1

/* Thread attributes: initialise with cap_thread_attr_init (or the static
 * initializer), then use the setters; the fields are not part of the API. */
typedef struct cap_thread_attr {
    size_t stack_size; /* 0: the CAP_STACK_SIZE default */
    int detach_state;
    char name[CAP_THREAD_NAME_MAX];
    int has_sigmask;   /* 0: the new thread takes its creator's mask */
    uint64_t sigmask;  /* signal s at bit s - 1 */
} cap_thread_attr_t;

#define CAP_THREAD_ATTR_INITIALIZER { 0, CAP_CREATE_JOINABLE, { 0 }, 0, 0 }

/* Smallest and largest stack a thread may ask for. */
#define CAP_STACK_MIN ((size_t)16 * 1024)
#define CAP_STACK_MAX ((size_t)1024 * 1024 * 1024)

int cap_thread_attr_init(cap_thread_attr_t *attr);
int cap_thread_attr_destroy(cap_thread_attr_t *attr);
/* EINVAL outside [CAP_STACK_MIN, CAP_STACK_MAX]. The stack is rounded up
 * to a page; the attribute keeps (and reports) the size as given. */
int cap_thread_attr_setstacksize(cap_thread_attr_t *attr, size_t size);
int cap_thread_attr_getstacksize(const cap_thread_attr_t *attr, size_t *size);
int cap_thread_attr_setdetachstate(cap_thread_attr_t *attr, int state);
int cap_thread_attr_getdetachstate(const cap_thread_attr_t *attr, int *state);
/* ERANGE when the name does not fit CAP_THREAD_NAME_MAX. */
int cap_thread_attr_setname(cap_thread_attr_t *attr, const char *name);
/* GNU's pthread_attr_setsigmask_np: the signal mask a thread created with
 * attr starts with, instead of its creator's (NULL: its creator's again).
 * _getsigmask fills *set and returns 0, or CAP_ATTR_NO_SIGMASK with *set
 * empty when none was set. */
#define CAP_ATTR_NO_SIGMASK (-1)
int cap_thread_attr_setsigmask(cap_thread_attr_t *attr, const sigset_t *set);
int cap_thread_attr_getsigmask(const cap_thread_attr_t *attr, sigset_t *set);
/* GNU's pthread_setattr_default_np and pthread_getattr_default_np: the
 * attributes cap_thread_create (and thrd_create) uses when given none, for
 * threads created afterwards. _setdefault copies attr whole (EINVAL for a
 * bad stack size or detach state); a stack size of 0 there keeps the
 * default stack size as it was. _getdefault copies them out; a stack
 * size of 0 there stands for CAP_STACK_SIZE (cap_thread_attr_getstacksize
 * reports that). At start: cap_thread_attr_init's values. */
int cap_thread_attr_setdefault(const cap_thread_attr_t *attr);
int cap_thread_attr_getdefault(cap_thread_attr_t *attr);

/* EAGAIN when memory or handles run out (never aborts); EINVAL on a bad
 * attribute. The new thread may start on any worker. */
int cap_thread_create(cap_thread_t *thread, const cap_thread_attr_t *attr,
                      void *(*start)(void *), void *arg);
/* EDEADLK on self-join, EINVAL on a detached thread or one another thread
 * is already joining, ESRCH on an unknown or stale handle. */
int cap_thread_join(cap_thread_t thread, void **retval);
/* GNU's pthread_tryjoin_np: EBUSY while the thread has not ended (then
 * it stays joinable), else as cap_thread_join. */
int cap_thread_tryjoin(cap_thread_t thread, void **retval);
/* pthread_clockjoin_np (and, on CLOCK_REALTIME, pthread_timedjoin_np):
 * as cap_thread_join, but ETIMEDOUT once abstime has passed on clock
 * (CLOCK_REALTIME or CLOCK_MONOTONIC, else EINVAL; EINVAL for a tv_nsec
 * outside [0, 1e9); NULL: no time limit) with the thread still running,
 * which then stays joinable. A thread that has ended is joined whatever
 * the time. A cancellation point, as cap_thread_join. */
int cap_thread_clockjoin(cap_thread_t thread, void **retval, clockid_t clock,
                         const struct timespec *abstime);
/* EINVAL if already detached, ESRCH on an unknown or stale handle. */
int cap_thread_detach(cap_thread_t thread);
/* Ends the calling thread. From main(), waits for every other thread and
 * then exits the process with status 0, as pthread_exit does. */
CAP_NORETURN void cap_thread_exit(void *retval);
/* The calling user thread; 0 on a kernel thread the library does not run. */
cap_thread_t cap_thread_self(void);
int cap_thread_equal(cap_thread_t a, cap_thread_t b);

/* ERANGE when the name is too long, ESRCH on a stale handle. */
int cap_thread_setname(cap_thread_t thread, const char *name);
int cap_thread_getname(cap_thread_t thread, char *buf, size_t len);
/* What thread runs with, as pthread_getattr_np reports it: its stack
 * size, its detach state now (CAP_CREATE_DETACHED also after
 * cap_thread_detach) and its name. ESRCH on an unknown or stale handle. */
int cap_thread_getattr(cap_thread_t thread, cap_thread_attr_t *attr);
/* The stack thread runs on: its lowest usable address and its size (main:
 * the process stack; with linked stacks, the first chunk). ESRCH on an
 * unknown or stale handle. */
int cap_thread_getstack(cap_thread_t thread, void **addr, size_t *size);

/* Sends sig to thread, as pthread_kill does: the signal is pending for
 * that thread alone until it is delivered there (its handler runs in that
 * thread, and a blocking call of it fails with EINTR or, under
 * SA_RESTART, goes on) or taken by its sigwait; it stays pending while
 * the thread blocks it. A signal ignored and not blocked is dropped; one
 * whose default action ends or stops the process does so. sig 0 only
 * checks that thread exists (an exited one not yet joined counts).
 * A real-time signal queues: each instance sent is delivered (or taken)
 * on its own, up to 255 pending per signal and thread (EAGAIN beyond).
 * EINVAL for a signal number out of range or reserved by glibc (32, 33),
 * ESRCH on an unknown or stale handle. Limits: docs/pthread-compat.md. */
int cap_thread_kill(cap_thread_t thread, int sig);

/* Sends sig to thread with value, as pthread_sigqueue does: as
 * cap_thread_kill, and the handler (SA_SIGINFO), sigwaitinfo or a
 * signalfd read there sees si_code SI_QUEUE, this process's pid and uid,
 * and value. Instances of a real-time signal are delivered in the order
 * sent (one sent meanwhile with cap_thread_kill may be reported before a
 * value sent earlier: docs/pthread-compat.md); a standard signal pending
 * already keeps its first instance's siginfo. EAGAIN also when 256
 * signals with values (and process signals the library routes) are
 * pending in the process. */
int cap_thread_sigqueue(cap_thread_t thread, int sig, const __sigval_t value);

/* Lets other runnable threads run. Always returns 0. */
int cap_yield(void);
/* Sleeps at least ns nanoseconds of CLOCK_MONOTONIC; never returns early.
 * Only the calling user thread waits. Returns 0. */
int cap_sleep_ns(uint64_t ns);
int cap_usleep(uint64_t usec);

/* ---- thread-specific data -------------------------------------------- */

typedef uint32_t cap_key_t;

#define CAP_KEYS_MAX 1024
#define CAP_DESTRUCTOR_ITERATIONS 4

/* EAGAIN when CAP_KEYS_MAX keys exist. */
int cap_key_create(cap_key_t *key, void (*destructor)(void *));
/* EINVAL on a key that is not live. Destructors of a deleted key never run. */
int cap_key_delete(cap_key_t key);
/* Values are per thread: per user thread, and per kernel thread on one
 * the library does not run (a thread made by glibc's pthread_create),
 * whose destructors run as it ends. */
void *cap_getspecific(cap_key_t key);
/* EINVAL on a dead key, ENOMEM if the value table cannot grow. */
int cap_setspecific(cap_key_t key, const void *value);

/* ---- once ------------------------------------------------------------- */

typedef struct cap_once {
    uint32_t state;
} cap_once_t;

#define CAP_ONCE_INIT { 0 }

/* Runs init exactly once; concurrent callers park until it has returned. */
int cap_once(cap_once_t *once, void (*init)(void));

/* ---- runtime information ---------------------------------------------- */

/* Index of the worker (kernel thread) running the caller, from 0; -1 when
 * the caller is not a user thread. */
int cap_worker_id(void);
/* Number of workers the runtime started (CAP_WORKERS). */
int cap_worker_count(void);
/* CLOCK_MONOTONIC in nanoseconds: the clock every deadline uses. */
uint64_t cap_now_ns(void);

/* ---- processes -------------------------------------------------------- */

/* pthread_atfork for the library's fork (fork, vfork, daemon; not
 * posix_spawn, popen or system): prepare handlers run newest first before
 * the fork, parent and child handlers oldest first after it, the child's
 * once the child's runtime is set up (so they may unlock mutexes and
 * create threads). Any may be NULL. Handlers registered with glibc's
 * pthread_atfork run inside the fork, after these prepare handlers and
 * before these parent and child handlers. 0, or ENOMEM. */
int cap_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

#ifdef __cplusplus
}
#endif

#include "capriccio/sync.h" /* mutexes, conditions, ..., cancellation */
#include "capriccio/stack.h" /* stack statistics (pooled and linked stacks) */
#include "capriccio/disk.h"  /* disk statistics (how file reads were served) */

#endif /* CAPRICCIO_H */

/* SPDX-License-Identifier: MIT */
/*
 * The few out-of-line pieces of the pthread compatibility header
 * (include/capriccio/pthread.h); everything else there is a rename or a
 * static inline shim. (sem_open's shim is here because its arguments
 * need <fcntl.h> and <stdarg.h>, which the header keeps out of the
 * program's namespace.)
 *
 * cap_errno_location is deliberately *not* declared const (glibc's
 * __errno_location is): a compiler may then not keep the address across a
 * call, which matters because a user thread can block in that call and
 * resume on another worker, whose errno lives elsewhere (DESIGN.md,
 * Migration and TLS). The worker loop keeps each user thread's errno in
 * its TCB and stores it into the current kernel thread's slot on resume,
 * so the slot of the kernel thread running us now is always ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "capriccio.h"

int *cap_errno_location(void);
int cap_compat_setconcurrency(int level);
int cap_compat_getconcurrency(void);
void cap_compat_setdefault_rest(size_t guard_size, int inherit);
void cap_compat_getdefault_rest(size_t *guard_size, int *inherit);
cap_sem_t *cap_compat_sem_open(const char *name, int oflag, ...);

int *cap_errno_location(void)
{
    return &errno;
}

/* pthread_setconcurrency is only a hint; POSIX asks that get returns what
 * set stored. */
static atomic_int concurrency;

int cap_compat_setconcurrency(int level)
{
    if (level < 0)
        return EINVAL;
    atomic_store_explicit(&concurrency, level, memory_order_relaxed);
    return 0;
}

int cap_compat_getconcurrency(void)
{
    return atomic_load_explicit(&concurrency, memory_order_relaxed);
}

/* The parts of the process's default pthread_attr_t that the library's
 * own default (thread/default_attr.c) does not hold and that can take
 * more than one value: kept so that pthread_getattr_default_np gives back
 * what pthread_setattr_default_np was given (threads get no guard page of
 * that size: pthread-compat.md). Two words, each read and written whole;
 * a get racing a set may see one word of each. */
static _Atomic size_t default_guard_size = 4096; /* pthread_attr_init's */
static atomic_int default_inherit = PTHREAD_INHERIT_SCHED;

void cap_compat_setdefault_rest(size_t guard_size, int inherit)
{
    atomic_store_explicit(&default_guard_size, guard_size, memory_order_relaxed);
    atomic_store_explicit(&default_inherit, inherit, memory_order_relaxed);
}

void cap_compat_getdefault_rest(size_t *guard_size, int *inherit)
{
    *guard_size = atomic_load_explicit(&default_guard_size, memory_order_relaxed);
    *inherit = atomic_load_explicit(&default_inherit, memory_order_relaxed);
}

/* sem_open: mode and value follow oflag only with O_CREAT, as in
 * sem_open(3). A failure sets errno and returns a null pointer, which is
 * SEM_FAILED under the header. */
cap_sem_t *cap_compat_sem_open(const char *name, int oflag, ...)
{
    unsigned mode = 0, value = 0;
    if (oflag & O_CREAT) {
        va_list ap;
        va_start(ap, oflag);
        mode = (unsigned)va_arg(ap, mode_t);
        value = va_arg(ap, unsigned);
        va_end(ap);
    }
    cap_sem_t *s;
    int err = cap_sem_open(name, oflag, mode, value, &s);
    if (err != 0) {
        errno = err;
        return NULL;
    }
    return s;
}

/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libc-named wrappers of src/intercept/.
 *
 * The shared library defines read, write, accept, poll, ... (listed in
 * src/exports.map). Called on a user thread, a wrapper goes through the
 * io layer: try the call without blocking, park on EAGAIN. Called on any
 * other kernel thread (the library's own offload threads, an
 * application's own pthreads, code running before start-up), it forwards
 * to the next definition of the name, normally libc's, found with
 * dlsym(RTLD_NEXT) (CAP__REAL) — with one exception: a socket the runtime
 * created (and made non-blocking) that the application believes blocking
 * gets its blocking behaviour back with poll(2) (cap__ic_foreign_wait).
 *
 * Inside the library only raw system calls or CAP__REAL are used for
 * these names: calling `read` here would come back into the wrapper.
 *
 * glibc calls its internal aliases (printf -> __write), so stdio never
 * enters these wrappers: a stream write blocks its kernel thread instead
 * of parking while holding the FILE lock (DESIGN.md, Hazard).
 */
#ifndef CAP_INTERCEPT_INTERCEPT_H
#define CAP_INTERCEPT_INTERCEPT_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>

#include "io/fd.h"
#include "io/sigintr.h"
#include "sched/park.h"
#include "util/clock.h"

/* The next definition of name after this library (libc's); dies with a
 * message if there is none. */
void *cap__real_sym(const char *name);

/* A cached pointer to the next definition of fn, of fn's own type. */
#define CAP__REAL(fn)                                                              \
    ({                                                                             \
        static __typeof__(&fn) real_;                                              \
        __typeof__(&fn) p_ = __atomic_load_n(&real_, __ATOMIC_RELAXED);            \
        if (p_ == NULL) {                                                          \
            p_ = (__typeof__(&fn))cap__real_sym(#fn);                              \
            __atomic_store_n(&real_, p_, __ATOMIC_RELAXED);                        \
        }                                                                          \
        p_;                                                                        \
    })

static inline bool cap__ic_user(void)
{
    return cap__current() != NULL;
}

/* The single place -errno becomes -1 with errno set. */
static inline ssize_t cap__ic_ret(ssize_t r)
{
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

/* Raw system call result as >= 0 or -errno. */
static inline long cap__ic_sys(long r)
{
    return r < 0 ? -errno : r;
}

/* True if fd is a socket we made non-blocking while the application
 * believes it blocking. */
bool cap__ic_emulated(int fd);
/* On a thread we do not run: waits in poll(2) until fd is ready in dir or
 * its SO_RCVTIMEO/SO_SNDTIMEO passes. 0, or -EAGAIN on timeout. */
int cap__ic_foreign_wait(int fd, int dir);

/* What may interrupt a read-like call (signal(7)): a handler without
 * SA_RESTART; any handler once the socket has a timeout (deadline). */
static inline const cap__intr *cap__ic_intr(uint64_t deadline)
{
    return deadline == CAP__FOREVER ? &cap__intr_restart : &cap__intr_always;
}

/* The application's O_NONBLOCK view of a classified descriptor. */
static inline bool cap__ic_nonblock(const cap__fd *f)
{
    return cap__fd_has(f, CAP__FDF_APP_NONBLOCK);
}

#endif /* CAP_INTERCEPT_INTERCEPT_H */

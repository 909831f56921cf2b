/* SPDX-License-Identifier: MIT */
/*
 * Readiness calls: poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
 * epoll_pwait2 (and epoll_ctl, for the nesting of the program's sets
 * under the epoll backend's own). On a user thread they park instead of
 * blocking:
 *  - poll/ppoll: io/wait.c's cap__io_poll (the thread waits as an
 *    observer on every descriptor of the set);
 *  - select/pselect: converted to poll and back;
 *  - epoll_wait on the application's own epoll set: the set's descriptor
 *    is itself pollable, so the thread parks on it like on a socket. A
 *    set that holds a signalfd of ours (epoll_ctl marks it) also reports
 *    it for the waiting thread's own pending signals (io/sigfd.h).
 * Timeouts become absolute deadlines. Every one of them returns EINTR
 * when a caught signal interrupts it, whatever SA_RESTART says
 * (io/sigintr.h picks which parked call a signal interrupts). The mask of
 * ppoll/pselect/epoll_pwait is the thread's while the call waits
 * (io/sigmask.h), so it decides which signals may interrupt the call:
 * one in the mask never does; see docs/pthread-compat.md, "Signals".
 *
 * All are cancellation points (intercept.h): a cancel acts on entry or
 * while the thread is parked, after the call unlinked its waiter records.
 *
 * The arrays, sets, timeouts and masks are read (and written) here, not
 * by the kernel, so they are checked first (arch/usercheck.h): a bad
 * pointer gives EFAULT as in libc, not a fault.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigfd.h"
#include "util/clock.h"

static uint64_t deadline_ms(int ms)
{
    if (ms < 0)
        return CAP__FOREVER;
    if (ms == 0)
        return 0;
    return cap__deadline_after((uint64_t)ms * 1000000u);
}

static uint64_t deadline_ts(const struct timespec *ts)
{
    if (ts == NULL)
        return CAP__FOREVER;
    if (ts->tv_sec == 0 && ts->tv_nsec == 0)
        return 0;
    return cap__deadline_after(cap__timeout_ns((uint64_t)ts->tv_sec, (uint64_t)ts->tv_nsec));
}

/* The bytes of the signal mask the kernel reads (glibc passes _NSIG / 8). */
enum { MASK_BYTES = _NSIG / 8 };

static bool mask_readable(const sigset_t *mask)
{
    return mask == NULL || cap__user_readable(mask, MASK_BYTES);
}

static bool ts_readable(const struct timespec *ts)
{
    return ts == NULL || cap__user_readable(ts, sizeof *ts);
}

/* poll's checks in the kernel's order: more descriptors than
 * RLIMIT_NOFILE allows is EINVAL, an array that is not there EFAULT. Up
 * to 1024 the limit is read only for an array that is not there (the
 * kernel's poll says EINVAL for a good one). */
static int pollfds_error(struct pollfd *fds, nfds_t n)
{
    if (n > 1024 && n > cap__ic_nofile_soft())
        return -EINVAL;
    if (n > SIZE_MAX / sizeof *fds || !cap__user_writable(fds, n * sizeof *fds))
        return n > cap__ic_nofile_soft() ? -EINVAL : -EFAULT;
    return 0;
}

/* What may interrupt a call given mask (NULL: every caught signal);
 * a cancel always may. */
static cap__intr intr_of(const sigset_t *mask)
{
    cap__intr in = cap__intr_always;
    in.cancel = true;
    if (mask != NULL) {
        in.blocked = cap__sig_bits(mask);
        in.masked = true;
    }
    return in;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter()) {
        /* In a handler that may wait as its thread, a poll that would
         * wait parks it (intercept.h); libc's reports a bad array. */
        bool lifted = false;
        int r = timeout != 0 && pollfds_error(fds, n) == 0
                    ? cap__ic_lifted_poll(fds, n, deadline_ms(timeout), &lifted)
                    : 0;
        if (!lifted)
            return CAP__REAL(poll)(fds, n, timeout);
        if (r < 0) {
            errno = -r;
            return -1;
        }
        return r;
    }
    int bad = pollfds_error(fds, n);
    if (bad != 0)
        return (int)cap__ic_ret(bad);
    cap__intr in = intr_of(NULL);
    return (int)cap__ic_ret_cancel(cap__io_poll(fds, n, deadline_ms(timeout), &in));
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(ppoll)(fds, n, ts, mask);
    /* The kernel's order: the timeout, the mask, then the array. */
    if (!ts_readable(ts))
        return (int)cap__ic_ret(-EFAULT);
    if (ts != NULL && !cap__ic_timespec_valid(ts))
        return (int)cap__ic_ret(-EINVAL);
    int bad = mask_readable(mask) ? pollfds_error(fds, n) : -EFAULT;
    if (bad != 0)
        return (int)cap__ic_ret(bad);
    cap__intr in = intr_of(mask);
    return (int)cap__ic_ret_cancel(cap__io_poll(fds, n, deadline_ts(ts), &in));
}

_Noreturn void __chk_fail(void);

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
    if (fdslen / sizeof *fds < n)
        __chk_fail();
    return poll(fds, n, timeout);
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                const sigset_t *mask, size_t fdslen)
{
    if (fdslen / sizeof *fds < n)
        __chk_fail();
    return ppoll(fds, n, ts, mask);
}

/* ---- select ------------------------------------------------------------------ */

enum { STACK_PFDS = 32 };

static int select_via_poll(int nfds, fd_set *r, fd_set *w, fd_set *e, uint64_t deadline,
                           const cap__intr *in)
{
    if (nfds < 0)
        return -EINVAL;
    if (nfds > FD_SETSIZE) {
        /* The kernel takes nfds up to its descriptor table's size (sets
         * may be bigger than an fd_set); no descriptor lies beyond
         * RLIMIT_NOFILE. */
        rlim_t limit = cap__ic_nofile_soft();
        if (limit < (rlim_t)nfds)
            nfds = (int)limit;
    }
    /* The bytes of each set the kernel would read and write. */
    size_t set_bytes = ((size_t)nfds + 63) / 64 * 8;
    if ((r && !cap__user_writable(r, set_bytes)) || (w && !cap__user_writable(w, set_bytes)) ||
        (e && !cap__user_writable(e, set_bytes)))
        return -EFAULT;
    struct pollfd stack_p[STACK_PFDS], *p = stack_p;
    int n = 0;
    for (int fd = 0; fd < nfds; fd++)
        if ((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e)))
            n++;
    if (n > STACK_PFDS && (p = malloc((size_t)n * sizeof *p)) == NULL)
        return -ENOMEM;
    n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        short ev = 0;
        if (r && FD_ISSET(fd, r))
            ev |= POLLIN;
        if (w && FD_ISSET(fd, w))
            ev |= POLLOUT;
        if (e && FD_ISSET(fd, e))
            ev |= POLLPRI;
        if (ev)
            p[n++] = (struct pollfd){ .fd = fd, .events = ev };
    }
    int rc = cap__io_poll(p, (nfds_t)n, deadline, in);
    if (rc >= 0) {
        for (int i = 0; i < n; i++)
            if (p[i].revents & POLLNVAL)
                rc = -EBADF;
    }
    if (rc >= 0) {
        if (r)
            memset(r, 0, set_bytes);
        if (w)
            memset(w, 0, set_bytes);
        if (e)
            memset(e, 0, set_bytes);
        rc = 0;
        for (int i = 0; i < n; i++) {
            short re = p[i].revents, ev = p[i].events;
            if ((ev & POLLIN) && (re & (POLLIN | POLLHUP | POLLERR))) {
                FD_SET(p[i].fd, r);
                rc++;
            }
            if ((ev & POLLOUT) && (re & (POLLOUT | POLLERR))) {
                FD_SET(p[i].fd, w);
                rc++;
            }
            if ((ev & POLLPRI) && (re & POLLPRI)) {
                FD_SET(p[i].fd, e);
                rc++;
            }
        }
    }
    if (p != stack_p)
        free(p);
    return rc;
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(select)(nfds, r, w, e, tv);
    uint64_t deadline = CAP__FOREVER;
    if (tv != NULL) {
        if (nfds < 0)
            return (int)cap__ic_ret(-EINVAL);
        if (!cap__user_writable(tv, sizeof *tv)) /* Linux writes the time left back */
            return (int)cap__ic_ret(-EFAULT);
        if (tv->tv_sec < 0 || tv->tv_usec < 0)
            return (int)cap__ic_ret(-EINVAL);
        /* Microseconds past a second count as whole seconds, as Linux's */
        uint64_t ns = cap__timeout_ns((uint64_t)tv->tv_sec + (uint64_t)tv->tv_usec / 1000000u,
                                      (uint64_t)tv->tv_usec % 1000000u * 1000u);
        deadline = ns == 0 ? 0 : cap__deadline_after(ns);
    }
    cap__intr in = intr_of(NULL);
    int rc = select_via_poll(nfds, r, w, e, deadline, &in);
    if (tv != NULL && deadline != 0) { /* Linux reports the time left */
        uint64_t now = cap__now(), left = deadline > now ? deadline - now : 0;
        tv->tv_sec = (time_t)(left / 1000000000u);
        tv->tv_usec = (suseconds_t)(left % 1000000000u / 1000u);
    }
    return (int)cap__ic_ret_cancel(rc);
}

int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
            const sigset_t *mask)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(pselect)(nfds, r, w, e, ts, mask);
    if (nfds >= 0 && !(ts_readable(ts) && mask_readable(mask)))
        return (int)cap__ic_ret(-EFAULT);
    if (ts != NULL && !cap__ic_timespec_valid(ts))
        return (int)cap__ic_ret(-EINVAL);
    cap__intr in = intr_of(mask);
    return (int)cap__ic_ret_cancel(select_via_poll(nfds, r, w, e, deadline_ts(ts), &in));
}

/* ---- epoll ------------------------------------------------------------------- */

/* Passed through, with two additions.
 *
 * With CAP_NETIO=epoll a set of the program that a thread waited on is
 * in the backend's set too, a nesting level above it: adding a chain of
 * sets under it could fail with ELOOP where Linux takes it. The backend
 * then lets the set go (its waits poll it, like a set nested too deep to
 * join the backend's) and the add is made again. Only the set itself is
 * let go: a set the program waited on further up the chain still counts.
 *
 * A signalfd of ours added to a set marks the set (on every number of
 * it), whose waits then also report the signalfd for the waiting thread's
 * own pending signals (io/sigfd.h). The mark stays for the set's life: a
 * later EPOLL_CTL_DEL costs those waits a look, nothing more. */
int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    long r = syscall(SYS_epoll_ctl, epfd, op, fd, ev);
    if (r != 0 && errno == ELOOP && op == EPOLL_CTL_ADD &&
        cap__netio_active == &cap__netio_epoll && cap__io_unwatch(epfd))
        r = syscall(SYS_epoll_ctl, epfd, op, fd, ev);
    if (r == 0 && (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD)) {
        cap__fd *t = cap__fd_peek(fd);
        if (t != NULL && cap__fd_has(t, CAP__FDF_SIGNALFD)) {
            /* A handler marks this number only, if its record exists:
             * the walk of the table, or a new chunk of it, may take
             * locks the code it interrupted holds. */
            bool handler = cap__in_signal_handler();
            cap__fd *set = handler ? cap__fd_peek(epfd) : cap__fd_get(epfd);
            if (set != NULL && !cap__fd_has(set, CAP__FDF_SIGEPOLL)) {
                if (handler)
                    cap__fd_set(set, CAP__FDF_SIGEPOLL);
                else
                    cap__fd_set_view(epfd, CAP__FDF_SIGEPOLL, CAP__FDF_SIGEPOLL);
            }
        }
    }
    return (int)r;
}

/* own: the set holds a signalfd of ours (CAP__FDF_SIGEPOLL). */
static int epoll_loop(cap__fd *f, int epfd, struct epoll_event *ev, int max,
                      uint64_t deadline, cap__io_call *c, bool own)
{
    cap__thread *self = cap__current();
    for (;;) {
        cap__io_ticket tk;
        cap__io_prepare(&tk, f, epfd, CAP__IO_READ);
        /* The sends to the thread before it looks at its pending set:
         * it parks only if there was none since (io/sigfd.h). */
        if (own)
            c->sends = atomic_load(&self->sig_sends);
        long r = own ? cap__sigfd_epoll(epfd, ev, max, self)
                     : cap__ic_sys(syscall(SYS_epoll_wait, epfd, ev, max, 0));
        /* Others parked on the set while it is still ready (level-
         * triggered events stay ready once reported, and the backend
         * reports the set's readiness as an edge): the next one is woken,
         * as the kernel wakes another epoll_wait when events are left
         * after a report. Without it they waited for the next new event,
         * for good if none came. (The check inline: nearly always nobody
         * else waits.) */
        if (r > 0 && __atomic_load_n(&f->head[CAP__IO_READ], __ATOMIC_RELAXED) != NULL)
            cap__io_handoff(f, epfd, CAP__IO_READ);
        if (r != 0 || deadline == 0)
            return (int)r;
        if (deadline != CAP__FOREVER && cap__now() >= deadline)
            return 0;
        int rc = cap__io_wait(&tk, deadline, c);
        if (rc == EBADF || rc == EINTR || rc == ECANCELED)
            return -rc;
        if (rc == EPERM)
            return -EPERM; /* the caller waits another way (epoll_wait never says EPERM) */
    }
}

/* A set the backend refused to watch: with CAP_NETIO=epoll one nested as
 * deep as the kernel allows (the backend's own set would be a level
 * more). Waiting in the kernel's epoll_wait would block the worker, and
 * the threads on it that would make the set ready, past the deadline;
 * poll() on the set's descriptor keeps the deadline and the signals and
 * looks again every millisecond at a descriptor it cannot watch. */
static int unwatched_epoll_wait(int epfd, struct epoll_event *ev, int max, uint64_t deadline,
                                const cap__intr *in)
{
    for (;;) {
        struct pollfd p = { .fd = epfd, .events = POLLIN };
        int rc = cap__io_poll(&p, 1, deadline, in);
        if (rc <= 0)
            return rc;
        /* Ready (or closed: POLLNVAL, and epoll_wait says EBADF); another
         * thread may have taken the events meanwhile. */
        long r = syscall(SYS_epoll_wait, epfd, ev, max, 0);
        if (r != 0)
            return (int)cap__ic_sys(r);
    }
}

static int user_epoll_wait(int epfd, struct epoll_event *ev, int max, uint64_t deadline,
                           const sigset_t *mask)
{
    cap__fd *f = cap__fd_get(epfd);
    if (f == NULL)
        return (int)cap__ic_sys(syscall(SYS_epoll_wait, epfd, ev, max, -1));
    cap__intr in = intr_of(mask);
    /* A set holding a signalfd of ours: a send to the thread of any
     * signal it blocks wakes the wait to look again (io/sigfd.h). */
    bool own = cap__fd_has(f, CAP__FDF_SIGEPOLL);
    if (own)
        in.wakes = UINT64_MAX;
    cap__io_call c;
    cap__io_call_begin(&c, &in, false);
    int r = epoll_loop(f, epfd, ev, max, deadline, &c, own);
    cap__io_call_end(&c);
    if (r == -EPERM)
        r = unwatched_epoll_wait(epfd, ev, max, deadline, &in);
    return r;
}

int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(epoll_wait)(epfd, ev, max, timeout);
    return (int)cap__ic_ret_cancel(user_epoll_wait(epfd, ev, max, deadline_ms(timeout), NULL));
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(epoll_pwait)(epfd, ev, max, timeout, mask);
    if (!mask_readable(mask))
        return (int)cap__ic_ret(-EFAULT);
    return (int)cap__ic_ret_cancel(user_epoll_wait(epfd, ev, max, deadline_ms(timeout), mask));
}

int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
                 const sigset_t *mask)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(epoll_pwait2)(epfd, ev, max, ts, mask);
    if (!(ts_readable(ts) && mask_readable(mask)))
        return (int)cap__ic_ret(-EFAULT);
    if (ts != NULL && !cap__ic_timespec_valid(ts))
        return (int)cap__ic_ret(-EINVAL);
    return (int)cap__ic_ret_cancel(user_epoll_wait(epfd, ev, max, deadline_ts(ts), mask));
}

/* SPDX-License-Identifier: MIT */
/*
 * Sockets: creation (socket, socketpair, accept, accept4), connect, the
 * timeouts (setsockopt SO_RCVTIMEO / SO_SNDTIMEO) that bound waits, and
 * shutdown, which wakes the threads parked on its own socket in the
 * directions it shut: the kernel ends a blocked call there (a read
 * returns 0, a write on a full socket EPIPE, accept EINVAL), but a Unix
 * socket reports no readiness change for it, so without the wake-up a
 * thread parked writing to a full one would wait for ever (its peer's
 * writers too, after a SHUT_RD).
 *
 * Every socket created through these names is created non-blocking (the
 * runtime owns it: CAP__FDF_OWNED) and the application's own view of
 * O_NONBLOCK is kept in the descriptor table (fcntl and ioctl FIONBIO in
 * fd.c maintain it), so a socket the application made non-blocking still
 * returns EAGAIN / EINPROGRESS. accept and connect need the descriptor
 * itself non-blocking (no per-call flag exists); data transfers use
 * MSG_DONTWAIT and do not care.
 *
 * A connect of a socket the application believes blocking acts as the
 * kernel's blocking one: it waits for the connection it starts, or for
 * one an earlier call started (EALREADY), and leaves the socket connected
 * (the next connect says EISCONN).
 *
 * A listening or connecting socket we did not create (inherited) is
 * never switched to non-blocking: accept tries as an io_uring operation
 * that does not wait (io/nowait_ring.h; readiness then the call where
 * the kernel cannot), connect runs on the offload pool.
 *
 * accept, accept4 and connect are cancellation points (intercept.h). A
 * cancel acts on entry or while the thread is parked; an accept that got
 * a connection returns it (the request waits for the next point). A
 * connect cancelled while in progress leaves the connection attempt
 * going on, as after EINTR; the offloaded connect of a blocking socket
 * we did not create is a point on entry only.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "arch/ownedxfer.h"
#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/nowait_ring.h"
#include "util/clock.h"

_Static_assert(sizeof(struct timeval) == 16 && sizeof(time_t) == 8,
               "SO_RCVTIMEO_NEW takes struct timeval's layout here (x86_64)");

static uint32_t socket_flags(int domain, int type, int proto, bool app_nonblock)
{
    uint32_t fl = CAP__FDF_OWNED | CAP__FDF_SOLE;
    if (app_nonblock)
        fl |= CAP__FDF_APP_NONBLOCK;
    if ((type & 0xf) == SOCK_STREAM) {
        fl |= CAP__FDF_STREAM_SOCK;
        if ((domain == AF_INET || domain == AF_INET6) && (proto == 0 || proto == IPPROTO_TCP))
            fl |= CAP__FDF_DRAINS; /* TCP (io/fd.h: drained sockets) */
    }
    return fl;
}

/* The type a socket is created with: non-blocking, ours, except inside a
 * signal handler, where it is created as asked and the table learns of it
 * after the handler (io/fd.h) without CAP__FDF_OWNED and _SOLE. */
static int our_type(int type)
{
    return cap__in_signal_handler() ? type : type | SOCK_NONBLOCK;
}

static uint32_t created_flags(int domain, int type, int proto)
{
    uint32_t fl = socket_flags(domain, type, proto, type & SOCK_NONBLOCK);
    if (cap__in_signal_handler())
        fl &= ~(uint32_t)(CAP__FDF_OWNED | CAP__FDF_SOLE);
    return fl;
}

int socket(int domain, int type, int proto)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int fd = (int)syscall(SYS_socket, domain, our_type(type), proto);
    if (fd >= 0)
        cap__fd_created(fd, CAP__FD_SOCKET, created_flags(domain, type, proto));
    return fd;
}

int socketpair(int domain, int type, int proto, int sv[2])
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int rc = (int)syscall(SYS_socketpair, domain, our_type(type), proto, sv);
    if (rc == 0) {
        uint32_t fl = created_flags(domain, type, proto);
        cap__fd_created(sv[0], CAP__FD_SOCKET, fl);
        cap__fd_created(sv[1], CAP__FD_SOCKET, fl);
    }
    return rc;
}

/* ---- accept ----------------------------------------------------------------- */

struct accept_op {
    cap__fd *f; /* the listener's record */
    struct sockaddr *addr;
    socklen_t *alen;
    int flags;
};

/* Whether fd is a listening socket (or cannot tell). */
static bool listening(int fd)
{
    int on = 1;
    socklen_t len = sizeof on;
    return syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) != 0 || on != 0;
}

static ssize_t accept_attempt(int fd, void *arg)
{
    struct accept_op *a = arg;
    long flags = a->flags | SOCK_NONBLOCK;
    /* Ours (non-blocking underneath): the call. Ownership is looked at
     * for each attempt, in one piece with the call (arch/ownedxfer.h): a
     * listener sent with SCM_RIGHTS, or given to fdopen, meanwhile is
     * blocking now, and a thread woken for a connection another took
     * would wait in the kernel's accept, holding its worker. */
    cap__fd_owned_call(a->f);
    long r = cap__arch_owned_xfer(fd, (long)a->addr, (long)a->alen, flags, &a->f->flags,
                                  CAP__FDF_OWNED, SYS_accept4);
    if (r != CAP__ARCH_NOT_OWNED)
        return r;
    /* A blocking listener we may not touch: readiness first (a socket
     * that does not listen reports none for accept, but the kernel's
     * call fails at once there, EINVAL, without waiting: make it). The
     * look is not needed for safety, but it costs a fifth of a try that
     * finds nothing (0.3 against 1.7 us here), and every accept call
     * starts with a try. */
    if (cap__ic_revents_now(fd, POLLIN) == 0 && listening(fd))
        return -EAGAIN;
    /* Then one try that does not wait, whatever the listener's mode: a
     * connection another thread or process took since the look is not
     * waited for (io/nowait_ring.h). */
    r = cap__nowait_accept(fd, a->addr, a->alen, (int)flags);
    if (r != CAP__NOWAIT_UNAVAILABLE)
        return r;
    /* Where the kernel cannot: its call, which then waits on the worker
     * for the next connection (README, limits). */
    return cap__sys6(SYS_accept4, fd, (long)a->addr, (long)a->alen, flags, 0, 0);
}

static void accepted(int listener, int fd, int flags)
{
    cap__fd *l = cap__fd_peek(listener);
    uint32_t fl = cap__in_signal_handler() ? 0 : CAP__FDF_OWNED | CAP__FDF_SOLE;
    if (flags & SOCK_NONBLOCK)
        fl |= CAP__FDF_APP_NONBLOCK;
    if (l == NULL || cap__fd_has(l, CAP__FDF_STREAM_SOCK))
        fl |= CAP__FDF_STREAM_SOCK;
    if (l != NULL && cap__fd_has(l, CAP__FDF_DRAINS))
        fl |= CAP__FDF_DRAINS;
    /* A TCP listener's timeouts are copied to the socket it accepts, a
     * Unix one's are not (connect made that socket afresh): when the
     * listener has any, the kernel says which the new socket got. */
    uint64_t timeo[2] = { 0, 0 };
    if (l != NULL && (atomic_load(&l->timeo[0]) != 0 || atomic_load(&l->timeo[1]) != 0))
        cap__fd_kernel_timeouts(fd, timeo);
    if (cap__in_signal_handler()) {
        cap__fd_defer(CAP__FDD_LIFE, fd, CAP__FD_SOCKET, fl, timeo); /* io/fd.h */
        return;
    }
    cap__fd_created(fd, CAP__FD_SOCKET, fl);
    cap__fd *f = cap__fd_peek(fd);
    if (f != NULL) {
        cap__fd_set_timeo(f, 0, timeo[0]);
        cap__fd_set_timeo(f, 1, timeo[1]);
        if (fl & CAP__FDF_DRAINS)
            cap__io_fresh_drained(f); /* its first read parks at once (io.h) */
    }
}

int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *restrict alen, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter()) {
        int r, e = errno; /* a success leaves it as it was (rw.c, FOREIGN) */
        for (;;) {
            r = (int)syscall(SYS_accept4, fd, addr.__sockaddr__, alen, our_type(flags));
            if (r >= 0 || errno != EAGAIN || !cap__ic_emulated(fd))
                break;
            int w = cap__ic_foreign_wait(fd, CAP__IO_READ);
            if (w != 0) {
                errno = -w;
                return -1;
            }
        }
        if (r >= 0) {
            accepted(fd, r, flags);
            errno = e;
        }
        return r;
    }
    cap__fd *f = cap__fd_get(fd);
    int kind = f != NULL ? cap__fd_classify(f, fd) : CAP__FD_UNKNOWN;
    if (kind != CAP__FD_SOCKET) /* EBADF, ENOTSOCK, or beyond the table */
        return (int)syscall(SYS_accept4, fd, addr.__sockaddr__, alen, flags);
    struct accept_op a = { .f = f, .addr = addr.__sockaddr__, .alen = alen, .flags = flags };
    bool nonblock = cap__ic_nonblock(f);
    uint64_t deadline = cap__io_deadline(f, CAP__IO_READ);
    cap__intr in = cap__ic_intr_cancel(deadline);
    ssize_t r = cap__io_do(f, fd, CAP__IO_READ, accept_attempt, &a, deadline, nonblock, &in, 0);
    if (r >= 0)
        accepted(fd, (int)r, flags);
    return (int)cap__ic_ret_cancel(r == -ETIMEDOUT ? -EAGAIN : r);
}

int accept(int fd, __SOCKADDR_ARG addr, socklen_t *restrict alen)
{
    return accept4(fd, addr, alen, 0);
}

/* ---- connect ---------------------------------------------------------------- */

struct connect_call {
    int fd;
    const struct sockaddr *addr;
    socklen_t len;
    long result;
};

static void run_connect(void *arg)
{
    struct connect_call *c = arg;
    c->result = cap__ic_sys(syscall(SYS_connect, c->fd, c->addr, c->len));
}

static int so_error(int fd)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        return errno;
    return err;
}

/* After a connect of a socket the application believes blocking failed:
 * the kernel's blocking connect leaves the socket unconnected, ready for
 * another try, while our non-blocking one leaves it "connecting", so the
 * application's next connect would get ECONNABORTED instead of trying
 * again. Connecting to AF_UNSPEC does what the blocking path does there
 * (disconnect, state unconnected). */
static void forget_failed_connect(int fd)
{
    struct sockaddr unspec = { .sa_family = AF_UNSPEC };
    syscall(SYS_connect, fd, &unspec, sizeof unspec);
}

/* After a connect of a socket the application believes blocking
 * succeeded: the kernel's blocking connect leaves the socket connected, so
 * that the next connect says EISCONN, while our non-blocking one leaves it
 * "connecting" until connect is called again (which then says 0). That
 * call, made here, does what the blocking path does. */
static void confirm_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    syscall(SYS_connect, fd, addr, len);
}

static long wait_connect(cap__fd *f, int fd, uint64_t deadline, cap__io_call *c)
{
    for (;;) {
        cap__io_ticket tk;
        cap__io_prepare(&tk, f, fd, CAP__IO_WRITE);
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        if (syscall(SYS_poll, &p, 1, 0) > 0) {
            int err = so_error(fd);
            if (err != 0)
                forget_failed_connect(fd);
            return err ? -err : 0;
        }
        int rc = cap__io_wait(&tk, deadline, c);
        if (rc == ETIMEDOUT)
            return -EINPROGRESS; /* what Linux reports when SO_SNDTIMEO expires */
        if (rc == EBADF || rc == EINTR || rc == ECANCELED)
            return -rc;
        if (rc == EPERM)
            syscall(SYS_poll, &p, 1, 10);
    }
}

/* Waits until an in-progress connect on fd (to addr) finishes; its
 * result, or timed_out at the deadline. A signal's EINTR leaves the
 * connect going on, as in the kernel (the next connect reports EALREADY). */
static long finish_connect(cap__fd *f, int fd, const struct sockaddr *addr, socklen_t len,
                           uint64_t deadline, long timed_out)
{
    cap__intr in = cap__ic_intr_cancel(deadline);
    cap__io_call c;
    cap__io_call_begin(&c, &in, false);
    long r = wait_connect(f, fd, deadline, &c);
    cap__io_call_end(&c);
    if (r == 0)
        confirm_connect(fd, addr, len);
    return r == -EINPROGRESS ? timed_out : r;
}

/* A blocking socket we may not touch: the kernel's blocking connect,
 * on the offload pool. */
static long offloaded_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct connect_call c = { fd, addr, len, 0 };
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    return cap__offload_call(run_connect, &c, &c.result, &in);
}

static long user_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    cap__fd *f = cap__fd_get(fd);
    int kind = f != NULL ? cap__fd_classify(f, fd) : CAP__FD_UNKNOWN;
    if (kind != CAP__FD_SOCKET)
        return cap__ic_sys(syscall(SYS_connect, fd, addr, len));
    bool nonblock = cap__ic_nonblock(f);
    if (!cap__fd_has(f, CAP__FDF_OWNED) && !nonblock)
        return offloaded_connect(fd, addr, len);
    uint64_t deadline = cap__io_deadline(f, CAP__IO_WRITE);
    cap__fd_owned_call(f);
    for (;;) {
        /* Ours (non-blocking underneath), looked at for each try in one
         * piece with the call (arch/ownedxfer.h): a socket given back
         * meanwhile (sent with SCM_RIGHTS, given to fdopen) is blocking
         * now, and its connect would wait in the kernel. */
        long r = nonblock ? cap__ic_sys(syscall(SYS_connect, fd, addr, len))
                          : cap__arch_owned_xfer(fd, (long)addr, len, 0, &f->flags,
                                                 CAP__FDF_OWNED, SYS_connect);
        if (r == CAP__ARCH_NOT_OWNED)
            return offloaded_connect(fd, addr, len);
        if (r == 0 || nonblock || (r != -EINPROGRESS && r != -EALREADY && r != -EAGAIN))
            return r;
        /* Ours, or one in progress since an earlier call: the kernel's
         * blocking connect waits for either, and says EINPROGRESS or
         * EALREADY at the send timeout. */
        if (r == -EINPROGRESS || r == -EALREADY)
            return finish_connect(f, fd, addr, len, deadline, r);
        /* EAGAIN: a Unix socket whose listener's backlog is full. Its
         * readiness is not reported on our descriptor, so retry soon. */
        uint64_t soon = cap__deadline_after(2000000);
        if (deadline != CAP__FOREVER && cap__now() >= deadline)
            return -EAGAIN;
        if (cap__park_cancellable(CAP__PARK_IO_WRITE, NULL, soon < deadline ? soon : deadline,
                                  NULL, NULL) == ECANCELED)
            return -ECANCELED; /* no wait structure to leave */
    }
}

int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (cap__ic_enter()) {
        /* A blocking connect made as a non-blocking one and waited for
         * says EINPROGRESS first; the kernel's, which succeeds, leaves
         * errno alone. */
        int err = cap__ic_errno(); /* (the thread may resume on another worker) */
        long r = user_connect(fd, addr.__sockaddr__, len);
        if (r == 0)
            cap__ic_set_errno(err);
        return (int)cap__ic_ret_cancel(r);
    }
    int started_err = errno;
    int r = (int)syscall(SYS_connect, fd, addr.__sockaddr__, len);
    if (r == 0 || !cap__ic_emulated(fd) || (errno != EINPROGRESS && errno != EALREADY))
        return r;
    int started = errno; /* what the send timeout reports, as in user_connect */
    int w = cap__ic_foreign_wait(fd, CAP__IO_WRITE);
    if (w != 0) {
        errno = w == -EINTR ? EINTR : started; /* the connection goes on, as Linux's */
        return -1;
    }
    int err = so_error(fd);
    if (err != 0) {
        forget_failed_connect(fd);
        errno = err;
        return -1;
    }
    confirm_connect(fd, addr.__sockaddr__, len);
    errno = started_err;
    return 0;
}

/* ---- shutdown ----------------------------------------------------------------- */

int shutdown(int fd, int how)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int rc = (int)syscall(SYS_shutdown, fd, how);
    if (rc != 0)
        return rc;
    cap__fd_shut_wakes(fd, how); /* io/fdsig.c */
    return 0;
}

/* ---- timeouts ----------------------------------------------------------------- */

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int rc = (int)syscall(SYS_setsockopt, fd, level, name, val, len);
    if (rc == 0 && level == IPPROTO_TCP && name == TCP_ULP) {
        /* kTLS and the like: a read may stop short at a record boundary
         * with more queued (io/fd.h: drained sockets). */
        cap__fd *f = cap__fd_peek(fd);
        if (f != NULL)
            cap__fd_clear(f, CAP__FDF_DRAINS);
    }
    if (rc == 0 && level == SOL_SOCKET && name == SO_RCVLOWAT) {
        /* A mark above one byte: blocking stream reads wait for it
         * (intercept/rw.c, lowat_ready). The kernel's value, as it kept it. */
        int mark = 1;
        socklen_t mlen = sizeof mark;
        if (cap__fd_get(fd) != NULL &&
            syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_RCVLOWAT, &mark, &mlen) == 0)
            /* The socket's: every number of its file reads under it. */
            cap__fd_set_view(fd, CAP__FDF_LOWAT, mark > 1 ? CAP__FDF_LOWAT : 0);
    }
    if (rc == 0 && level == SOL_SOCKET && name == SO_LINGER && len >= sizeof(struct linger)) {
        /* A close waits up to the timeout: intercept/linger.c. */
        const struct linger *lg = val;
        cap__fd_set_view(fd, CAP__FDF_LINGER,
                         lg->l_onoff && lg->l_linger > 0 ? CAP__FDF_LINGER : 0);
    }
    /* The _NEW names (64-bit seconds and microseconds, which on x86_64 is
     * struct timeval's layout too) set the same timeouts in the kernel. */
    bool rcv = name == SO_RCVTIMEO || name == SO_RCVTIMEO_NEW;
    bool snd = name == SO_SNDTIMEO || name == SO_SNDTIMEO_NEW;
    if (rc == 0 && level == SOL_SOCKET && (rcv || snd) && len >= sizeof(struct timeval)) {
        const struct timeval *tv = val;
        cap__fd_set_timeo_file(fd, rcv ? CAP__IO_READ : CAP__IO_WRITE, /* and its dups' */
                               cap__fd_timeo_ns(tv->tv_sec, tv->tv_usec));
    }
    return rc;
}

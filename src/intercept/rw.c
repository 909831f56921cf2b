/* SPDX-License-Identifier: MIT */
/*
 * Data transfer: read, write, readv, writev, recv*, send*, pread*,
 * pwrite*, preadv*, pwritev* (and the _FORTIFY_SOURCE __*_chk variants,
 * which glibc would otherwise route to its internal read; eventfd_read
 * and eventfd_write likewise).
 *
 * On a user thread every call becomes one transfer (xfer) on a message
 * header, by descriptor kind:
 *  - socket: sendmsg/recvmsg (sendto/recvfrom for a plain one-buffer call) with
 *    MSG_DONTWAIT, whoever created it, so the descriptor's own O_NONBLOCK
 *    never matters;
 *  - a pipe the runtime created (owned, non-blocking underneath: fd.c):
 *    plain read/write, ~90 ns cheaper per call than the vector calls;
 *  - a terminal, unless the call may not wait: its own rules (ttyio.c);
 *  - other pollable (fifo, eventfd, pipes we did not create or
 *    gave back): preadv2/pwritev2 at the file position with RWF_NOWAIT,
 *    which leaves their mode untouched; where the kernel refuses
 *    RWF_NOWAIT for a kind of file (in one direction: an eventfd takes it
 *    for reads only), wait for readiness and then make the plain call;
 *  - regular file: the disk layer (io/disk.c).
 * read, write, recv and send of one buffer, and writev, on a plain
 * blocking stream socket take a direct path to the same calls (below,
 * before the wrappers), without the general path's bookkeeping.
 * EAGAIN parks the thread on the descriptor (cap__io_do), unless the
 * application asked for non-blocking behaviour (its O_NONBLOCK view, or
 * MSG_DONTWAIT) or reads an error queue, which never waits
 * (cap__ic_errqueue_never_waits). A blocking write on a stream, and a
 * read with MSG_WAITALL (but not MSG_PEEK, which returns what is queued),
 * continue after partial transfers as the kernel would; an error after
 * progress reports the progress, and a socket's error is left to the next
 * call (error_pending). A blocking read of a datagram socket shut for
 * reading returns 0, as the kernel's does.
 *
 * All of them are cancellation points (intercept.h): a pending cancel
 * acts on entry, and one that arrives while the thread is parked acts
 * unless data already moved in this call, in which case the call returns
 * that partial count and the request waits for the next point (POSIX
 * allows either; the data is then not lost). Regular-file transfers are
 * points on entry only: the disk wait, like the kernel's, is not
 * interrupted.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/ownedxfer.h"
#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/disk_hot.h"
#include "io/fifo.h"
#include "io/io.h"
#include "io/ownfd.h"
#include "io/pipe.h"
#include "io/ttyfile.h"
#include "util/clock.h"

enum { STACK_IOVS = 8 };

/* The application's own vectors and headers are read here before the
 * kernel sees them, so they are checked first (arch/usercheck.h): the
 * errors the kernel would give instead of a fault. */
static int iov_error(const struct iovec *iov, int cnt)
{
    if (cnt < 0 || cnt > IOV_MAX)
        return -EINVAL;
    return cap__user_readable(iov, (size_t)cnt * sizeof *iov) ? 0 : -EFAULT;
}

/* Whether a vector holds no bytes. Linux's writev returns 0 then before
 * the file sees the call (vfs_writev); made a sendmsg of nothing, it would
 * send an empty datagram, or fail with EPIPE on a stream whose peer left. */
static bool iov_empty(const struct iovec *iov, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if (iov[i].iov_len != 0)
            return false;
    return true;
}

static int msg_error(const struct msghdr *msg)
{
    if (!cap__user_readable(msg, sizeof *msg))
        return -EFAULT;
    if (msg->msg_iovlen > IOV_MAX)
        return -EMSGSIZE;
    return cap__user_readable(msg->msg_iov, msg->msg_iovlen * sizeof *msg->msg_iov) ? 0
                                                                                     : -EFAULT;
}

struct op {
    struct msghdr *msg;
    int flags; /* MSG_* for sockets */
    bool sock, write;
    bool user_msg; /* the application's recvmsg header: it reads msg_flags */
    bool dgram_wait; /* a blocking read of a datagram socket: see shut_for_reading */
    bool continued;  /* the call moved data already: see error_pending */
    size_t lowat_want; /* a blocking stream read under SO_RCVLOWAT: its length */
    cap__fd *f;
};

/* Before an attempt that continues a transfer which moved data already:
 * whether the socket has an error pending (POLLERR). Linux's call returns
 * the count then and leaves the error to the next call; the attempt would
 * take it (and the count would be returned without it). An entry of the
 * error queue (timestamps, zero-copy notices) also shows as POLLERR and
 * ends such a transfer early, with its count. */
static bool error_pending(int fd)
{
    return cap__ic_revents_now(fd, 0) & POLLERR;
}

/* After a datagram socket's read said EAGAIN: whether the socket is shut
 * for reading (SHUT_RD), which its readiness reports as POLLRDHUP. Linux's
 * blocking read returns 0 there once the queue is empty (the wait ends at
 * the shutdown); the non-blocking attempt says EAGAIN, on which the thread
 * would park for ever. A stream socket's read returns 0 by itself. */
static bool shut_for_reading(int fd)
{
    return cap__ic_revents_now(fd, POLLRDHUP) & POLLRDHUP;
}

/* A blocking read of want bytes from a stream socket with SO_RCVLOWAT
 * above one (CAP__FDF_LOWAT): whether it may take what is queued now.
 * Linux's read waits until min(mark, want) bytes are there (or the end of
 * the stream, or an error); the non-blocking attempt would return fewer.
 * So: queued bytes (SIOCINQ) against that target, then the hang-up and
 * error a poll reports. Else the thread parks; a TCP socket reports
 * readiness only once the mark is reached, a Unix one at every arrival,
 * after which this looks again. */
static bool lowat_ready(int fd, size_t want)
{
    int mark = 1, queued = 0;
    socklen_t len = sizeof mark;
    if (cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_RCVLOWAT, (long)&mark, (long)&len, 0) != 0 ||
        mark <= 1)
        return true;
    size_t target = want < (size_t)mark ? want : (size_t)mark;
    if (cap__sys6(SYS_ioctl, fd, SIOCINQ, (long)&queued, 0, 0, 0) != 0 ||
        (size_t)queued >= target)
        return true;
    return cap__ic_revents_now(fd, POLLRDHUP) & (POLLRDHUP | POLLHUP | POLLERR);
}

/* A blocking write to a pipe or FIFO we did not make, which poll found
 * writable: that promises one free slot of the pipe, a page, so a write
 * of up to PIPE_BUF bytes fits and does not wait, but a longer one would
 * wait in the kernel until a reader made room for all of it, blocking
 * the worker (for good if the reader is a thread of the same worker). So
 * at most PIPE_BUF bytes go per call (whole if the write is no longer,
 * which keeps POSIX's atomicity of such writes; the caller's loop sends
 * the rest as a blocking stream write continues). */
static long fifo_write_piece(int fd, const struct msghdr *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->msg_iovlen && total <= PIPE_BUF; i++)
        total += m->msg_iov[i].iov_len;
    if (total <= PIPE_BUF)
        return cap__sys6(SYS_writev, fd, (long)m->msg_iov, (long)m->msg_iovlen, 0, 0, 0);
    struct iovec piece[STACK_IOVS];
    size_t n = 0, left = PIPE_BUF;
    for (size_t i = 0; i < m->msg_iovlen && n < STACK_IOVS && left > 0; i++) {
        size_t len = m->msg_iov[i].iov_len < left ? m->msg_iov[i].iov_len : left;
        if (len == 0)
            continue;
        piece[n++] = (struct iovec){ m->msg_iov[i].iov_base, len };
        left -= len;
    }
    return cap__sys6(SYS_writev, fd, (long)piece, (long)n, 0, 0, 0);
}

/* A blocking transfer on a FIFO we did not make, through its private
 * non-blocking description (io/ttyfile.h): true, and the call's result
 * in *r (-EAGAIN: the caller parks on fd's readiness); false if it gets
 * none. The fallback, fifo_write_piece, could still wait in the kernel
 * when another writer took the room readiness promised. */
static bool fifo_private_xfer(cap__fd *f, int fd, bool write, const struct msghdr *m, long *r)
{
    cap__ttyfile *t = cap__ttyfile_hold(fd, atomic_load(&f->gen));
    if (t == NULL)
        return false;
    *r = cap__sys6(write ? SYS_writev : SYS_readv, cap__ttyfile_fd(t), (long)m->msg_iov,
                   (long)m->msg_iovlen, 0, 0, 0);
    cap__ttyfile_release(t);
    return true;
}

/* Inline into cap__io_do's first try (xfer_msg); cap__io_do_wait calls it by address. */
__attribute__((always_inline)) static inline ssize_t attempt(int fd, void *arg)
{
    struct op *o = arg;
    struct msghdr *m = o->msg;
    if (o->sock) {
        if (__builtin_expect(o->continued, 0) && error_pending(fd))
            return 0; /* the caller returns what moved */
        if (__builtin_expect(o->lowat_want != 0, 0) && !lowat_ready(fd, o->lowat_want))
            return -EAGAIN;
        /* One buffer, no address or ancillary data: sendto, which the
         * kernel serves without copying in a message header and vector. */
        if (o->write && m->msg_iovlen == 1 && m->msg_name == NULL && m->msg_control == NULL)
            return cap__sys6(SYS_sendto, fd, (long)m->msg_iov[0].iov_base,
                             (long)m->msg_iov[0].iov_len, o->flags | MSG_DONTWAIT, 0, 0);
        /* The same for a plain one-buffer read (read, recv): recvfrom, about
         * 0.1 us cheaper a call than recvmsg, which matters most for the
         * read that finds nothing before a request-response thread parks.
         * Not for the application's own recvmsg, which gets msg_flags. */
        long r;
        if (!o->write && !o->user_msg && m->msg_iovlen == 1 && m->msg_name == NULL &&
            m->msg_control == NULL)
            r = cap__sys6(SYS_recvfrom, fd, (long)m->msg_iov[0].iov_base,
                          (long)m->msg_iov[0].iov_len, o->flags | MSG_DONTWAIT, 0, 0);
        else
            r = cap__sys6(o->write ? SYS_sendmsg : SYS_recvmsg, fd, (long)m,
                          o->flags | MSG_DONTWAIT, 0, 0, 0);
        /* Only once a hang-up was reported (NODRAIN: a shutdown through
         * our wrapper, or the backend's POLLRDHUP, which the registration
         * of the park that follows reports too): a read that finds nothing
         * then parks without a poll. */
        if (__builtin_expect(r == -EAGAIN && o->dgram_wait, 0) &&
            cap__fd_has(o->f, CAP__FDF_NODRAIN) && shut_for_reading(fd))
            return 0;
        return r;
    }
    /* Owned (non-blocking underneath): the plain call. The ownership test
     * and the call are one piece that a signal interrupting it makes start
     * over at the test (arch/ownedxfer.h): a fork may give the pipe back,
     * blocking, in between. */
    long owned_r = cap__ic_owned_rw(o->f, fd, o->write, m);
    if (owned_r != CAP__ARCH_NOT_OWNED) {
        if (owned_r > 0) /* wake a thread parked on the other end (io/pipe.h) */
            cap__pipe_after_xfer(o->f, o->write);
        return owned_r;
    }
    return cap__ic_stream_unowned(o->f, fd, o->write, o->msg);
}

/* intercept.h. */
ssize_t cap__ic_stream_unowned(cap__fd *f, int fd, bool write, const struct msghdr *m)
{
    /* read() or write() of nothing (the vector calls of nothing never get
     * here: their wrappers answer them as the kernel does): the plain
     * call, which the driver sees (/dev/full: ENOSPC), where a vector of
     * nothing is answered before it. It waits no more than one that
     * moves data would (a tty's write lock, behind a stopped writer). */
    /* Raw calls (arch/syscall.h) here, as attempt's for sockets and owned
     * pipes: a transfer that succeeds leaves errno as the caller had it,
     * not with the EOPNOTSUPP of a refused RWF_NOWAIT (an eventfd's write)
     * or the EAGAIN of the attempt before a park (a timerfd's read). */
    if (m->msg_iovlen == 1 && m->msg_iov[0].iov_len == 0)
        return cap__sys6(write ? SYS_write : SYS_read, fd,
                         (long)m->msg_iov[0].iov_base, 0L, 0, 0, 0);
    long nr = write ? SYS_pwritev2 : SYS_preadv2;
    uint32_t nowait_bad = write ? CAP__FDF_NOWAIT_BAD_WR : CAP__FDF_NOWAIT_BAD_RD;
    if (!cap__fd_has(f, nowait_bad)) {
        long r = cap__sys6(nr, fd, (long)m->msg_iov, (long)m->msg_iovlen, -1L, -1L,
                           RWF_NOWAIT);
        if (r != -EOPNOTSUPP)
            return r;
        cap__fd_set(f, nowait_bad | (cap__fifo_is(fd) ? CAP__FDF_FIFO : 0));
    }
    /* Readiness, then the plain call. A descriptor the application made
     * non-blocking is so in the kernel too (it is not ours): there the
     * plain call answers at once, as in libc, also where poll says
     * nothing (a FIFO that never had a writer: EOF; a short eventfd
     * read: EINVAL). A blocking read of a FIFO that never had a writer
     * answers 0 at once too, which poll does not show (io/fifo.h). */
    if (!cap__fd_has(f, CAP__FDF_APP_NONBLOCK)) {
        long r;
        if (cap__fd_has(f, CAP__FDF_FIFO) && fifo_private_xfer(f, fd, write, m, &r))
            return r;
        if (cap__ic_revents_now(fd, write ? POLLOUT : POLLIN) == 0 &&
            (write || !cap__fifo_answers_now(f, fd)))
            return -EAGAIN;
        if (write && cap__fd_has(f, CAP__FDF_FIFO))
            return fifo_write_piece(fd, m);
    }
    return cap__sys6(write ? SYS_writev : SYS_readv, fd, (long)m->msg_iov,
                     (long)m->msg_iovlen, 0, 0, 0);
}

/* intercept.h. */
void cap__ic_msg_advance(struct msghdr *msg, size_t n)
{
    struct iovec *v = msg->msg_iov;
    size_t left = msg->msg_iovlen;
    while (left > 0 && n >= v->iov_len) {
        n -= v->iov_len;
        v++;
        left--;
    }
    if (left > 0) {
        v->iov_base = (char *)v->iov_base + n;
        v->iov_len -= n;
    }
    msg->msg_iov = v;
    msg->msg_iovlen = left;
    msg->msg_control = NULL; /* ancillary data goes with the first part only */
    msg->msg_controllen = 0;
}

static ssize_t raw_blocking(int fd, bool write, struct msghdr *msg, int flags, bool sockapi)
{
    if (sockapi)
        return cap__ic_sys(syscall(write ? SYS_sendmsg : SYS_recvmsg, fd, msg, flags));
    return cap__ic_sys(syscall(write ? SYS_writev : SYS_readv, fd, msg->msg_iov,
                               msg->msg_iovlen));
}

/* intercept.h. The family is asked of the kernel, but only for the rare
 * error-queue read. */
bool cap__ic_errqueue_never_waits(int fd, int flags)
{
    if (!(flags & MSG_ERRQUEUE))
        return false;
    int domain = 0;
    socklen_t len = sizeof domain;
    return cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, (long)&domain, (long)&len,
                     0) == 0 &&
           (domain == AF_INET || domain == AF_INET6 || domain == AF_PACKET);
}

/* Whether fd, a socket, is a TCP one: asked of the kernel, but only for
 * the rare receive of nothing (below). */
static bool is_tcp(cap__fd *f, int fd)
{
    if (!cap__fd_has(f, CAP__FDF_STREAM_SOCK))
        return false;
    int proto = 0;
    socklen_t len = sizeof proto;
    return cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_PROTOCOL, (long)&proto, (long)&len,
                     0) == 0 &&
           proto == IPPROTO_TCP;
}

/* A blocking recv, recvfrom or recvmsg of nothing on a TCP socket. Linux
 * (tcp_recvmsg) waits once, until data, the end of the stream, an error,
 * the socket's receive timeout or a caught signal, and then returns 0
 * whichever came: never EINTR, never EAGAIN at the timeout, and a signal
 * ends it even with SA_RESTART (nothing is restarted, the call succeeded).
 * Reading nothing with MSG_DONTWAIT when data waits returns 0 too, so the
 * transfer's own attempt tells data from none. */
static ssize_t tcp_recv_nothing(cap__fd *f, int fd, struct op *o, uint64_t deadline,
                                cap__intr in)
{
    in.restart = false;
    ssize_t r = cap__io_do(f, fd, CAP__IO_READ, attempt, o, deadline, false, &in, 0);
    return r == -EINTR || r == -ETIMEDOUT ? 0 : r;
}

/* The socket transfer o moved data already: look for a pending error
 * before each attempt (error_pending), and a write raises no SIGPIPE
 * (Linux's returns the count, and the next call the error). */
static void continue_op(struct op *o)
{
    o->continued = true;
    if (o->write)
        o->flags |= MSG_NOSIGNAL;
}

/* One read-like or write-like call on a user thread; >= 0 or -errno.
 * user_msg: msg is the application's recvmsg header (see op); continued:
 * the call moved data before (the direct path's first send). */
static ssize_t xfer_msg(int fd, bool write, struct msghdr *msg, int flags, bool sockapi,
                        bool user_msg, bool continued)
{
    cap__fd *f = cap__fd_get(fd);
    if (f == NULL)
        return raw_blocking(fd, write, msg, flags, sockapi);
    int kind = cap__fd_classify(f, fd);
    if (kind == CAP__FD_BAD)
        return -EBADF;
    if (kind != CAP__FD_SOCKET && sockapi)
        return -ENOTSOCK;
    if (kind == CAP__FD_FILE)
        return cap__disk_rw(write ? CAP__DISK_WRITE : CAP__DISK_READ, fd, msg->msg_iov,
                            (int)msg->msg_iovlen, -1, 0);

    bool sock = kind == CAP__FD_SOCKET;
    int dir = write ? CAP__IO_WRITE : CAP__IO_READ;
    bool nonblock = cap__ic_nonblock(f) || (flags & MSG_DONTWAIT) ||
                    (sock && cap__ic_errqueue_never_waits(fd, flags));
    /* The thread's own signals are not in the kernel's signalfd. */
    if (__builtin_expect(!write && cap__fd_has(f, CAP__FDF_SIGNALFD), 0))
        return cap__ic_signalfd_read(f, fd, msg, nonblock);
    if (kind == CAP__FD_STREAM && !nonblock && !cap__fd_has(f, CAP__FDF_OWNED) &&
        cap__ic_is_tty(f, fd)) {
        cap__intr tty_in = cap__ic_intr_cancel(CAP__FOREVER);
        return cap__ic_tty_xfer(f, fd, write, msg, &tty_in);
    }
    /* Computed at the first park, if any (io.h): most calls never park. */
    uint64_t deadline = sock ? cap__io_deadline_later(f, dir) : CAP__FOREVER;
    bool stream = !sock || cap__fd_has(f, CAP__FDF_STREAM_SOCK);
    struct op o = { .msg = msg, .flags = flags, .sock = sock, .write = write,
                    .user_msg = user_msg, .dgram_wait = sock && !stream && !write && !nonblock,
                    .f = f };
    if (continued && sock)
        continue_op(&o);
    /* Not a peek: it would see the same bytes again (docs/pthread-compat.md). */
    bool all = !nonblock && stream &&
               (write || (flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL);
    cap__intr in = cap__ic_intr_cancel(deadline);
    if (continued)
        in.restart = false; /* data moved already: see the loop below */
    /* What a read asks for, when what it leaves tells whether it emptied
     * the socket (io.h: drain). */
    bool consumes = sock && !write && !(flags & (MSG_PEEK | MSG_OOB | MSG_ERRQUEUE));
    /* A blocking stream read under SO_RCVLOWAT waits for the mark
     * (lowat_ready); what it leaves then says nothing about emptiness. */
    bool lowat = sock && stream && !write && !nonblock && !all &&
                 !(flags & (MSG_OOB | MSG_ERRQUEUE)) && cap__fd_has(f, CAP__FDF_LOWAT);
    size_t want = 0;
    if (all || consumes || lowat)
        for (size_t i = 0; i < msg->msg_iovlen; i++)
            want += msg->msg_iov[i].iov_len;
    if (consumes && want == 0 && !sockapi)
        return 0; /* read/readv of nothing from a socket: at once (sock_read_iter) */
    if (consumes && want == 0 && !nonblock && is_tcp(f, fd))
        return tcp_recv_nothing(f, fd, &o, deadline, in);
    if (lowat)
        o.lowat_want = want;
    if (!all) {
        ssize_t r = cap__io_do(f, fd, dir, attempt, &o, deadline, nonblock, &in,
                               consumes && !lowat ? want : 0);
        return r == -ETIMEDOUT ? -EAGAIN : r;
    }

    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    struct msghdr m = *msg;
    bool copied = false;
    size_t total = 0;
    ssize_t r;
    for (;;) {
        /* One deadline for the whole call, set by its first park. */
        r = cap__io_do_at(f, fd, dir, attempt, &o, &deadline, false, &in,
                          consumes ? want - total : 0);
        if (r <= 0) /* error, timeout, cancel, or EOF for a MSG_WAITALL read */
            break;
        total += (size_t)r;
        if (total >= want)
            break;
        /* Data moved: a caught signal now ends the call with that count,
         * SA_RESTART or not, as Linux's does (a stream write, a
         * MSG_WAITALL read: the count is a result, nothing is restarted).
         * A restartable wait would go on waiting, for ever if nothing else
         * comes. */
        in.restart = false;
        if (sock && !o.continued)
            continue_op(&o);
        if (!copied) {
            if (m.msg_iovlen > STACK_IOVS && (v = malloc(m.msg_iovlen * sizeof *v)) == NULL)
                break;
            memcpy(v, m.msg_iov, m.msg_iovlen * sizeof *v);
            m.msg_iov = v;
            o.msg = &m;
            copied = true;
        }
        cap__ic_msg_advance(&m, (size_t)r);
    }
    if (v != stack_v)
        free(v);
    if (total > 0)
        return (ssize_t)total;
    return r == -ETIMEDOUT ? -EAGAIN : r;
}

static ssize_t xfer(int fd, bool write, struct msghdr *msg, int flags, bool sockapi)
{
    return xfer_msg(fd, write, msg, flags, sockapi, false, false);
}

/* ---- the direct path: one buffer on a plain blocking stream socket ------- */

/*
 * read, write, recv and send of one buffer, and writev (its first
 * sendmsg; writev_rest below), on a blocking stream socket
 * (the application's view) without an SO_RCVLOWAT mark, with no flag
 * that changes the call: nearly
 * every call of a thread-per-connection server. One load of the record's
 * kind and one of its flags decide it; it then makes the calls xfer_msg
 * would make for it (recvfrom or sendto with MSG_DONTWAIT, parking
 * through cap__io_do with the same drain, interrupt and timeout settings)
 * without building a message header and without deriving again what
 * these loads already say. Everything else returns false and goes the
 * general way, as does a write the kernel took only part of, or none of:
 * the general path then continues it (one more sendto when the first
 * found the buffer full, which the general path's snapshot needs anyway).
 * A socket timeout (SO_RCVTIMEO, SO_SNDTIMEO) is counted from the first
 * park, as on the general path (io.h, CAP__IO_TIMEO_LATER): a read that
 * finds data, and a write the kernel takes whole, never read the clock.
 */
struct buf1 {
    void *p;
    size_t n;
};

static ssize_t recv1_attempt(int fd, void *arg)
{
    struct buf1 *b = arg;
    return cap__sys6(SYS_recvfrom, fd, (long)b->p, (long)b->n, MSG_DONTWAIT, 0, 0);
}

/* cap__ic_intr_cancel(deadline): what may interrupt such a call, without
 * a timeout (a handler without SA_RESTART) and with one (any handler). */
static const cap__intr intr_restart_cancel = { .blocked = 0, .restart = true, .cancel = true };
static const cap__intr intr_always_cancel = { .blocked = 0, .restart = false, .cancel = true };

/* The record of fd if fd is such a socket, else NULL; *fl its flags. */
static inline cap__fd *plain_stream_sock(int fd, uint32_t *fl)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL)
        return NULL;
    /* Flags before kind, as cap__fd_classify (io/fd.h). */
    *fl = atomic_load_explicit(&f->flags, memory_order_acquire);
    if ((*fl & (CAP__FDF_STREAM_SOCK | CAP__FDF_APP_NONBLOCK | CAP__FDF_CLOSING |
                CAP__FDF_LOWAT)) != CAP__FDF_STREAM_SOCK ||
        atomic_load_explicit(&f->kind, memory_order_acquire) != CAP__FD_SOCKET)
        return NULL; /* a close under way too: classification waits for it */
    return f;
}

/* True if the direct path took the read (result in *r). A read of
 * nothing goes the general way (it answers at once, or waits once). */
__attribute__((always_inline)) static inline bool read1(int fd, void *buf, size_t n,
                                                        ssize_t *r)
{
    uint32_t fl;
    cap__fd *f = n > 0 ? plain_stream_sock(fd, &fl) : NULL;
    if (f == NULL)
        return false;
    /* cap__io_deadline_later with the flags loaded already. */
    uint64_t deadline = CAP__FOREVER;
    if ((fl & CAP__FDF_TIMEO) &&
        atomic_load_explicit(&f->timeo[CAP__IO_READ], memory_order_relaxed) != 0)
        deadline = CAP__IO_TIMEO_LATER;
    struct buf1 b = { buf, n };
    ssize_t rr = cap__io_do(f, fd, CAP__IO_READ, recv1_attempt, &b, deadline, false,
                            deadline == CAP__FOREVER ? &intr_restart_cancel
                                                     : &intr_always_cancel,
                            n);
    *r = rr == -ETIMEDOUT ? -EAGAIN : rr;
    return true;
}

/* read and recv past the direct path, out of line so that the direct
 * path's callers stay small; the wrapper's result (-1 and errno). */
__attribute__((noinline)) static ssize_t read_general(int fd, void *buf, size_t n, int flags,
                                                      bool sockapi)
{
    struct iovec v = { buf, n };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    return cap__ic_ret_cancel(xfer(fd, false, &m, flags, sockapi));
}

/* write and send past the direct path, which wrote done bytes of n (0 if
 * it did not apply): the general path for the rest; the wrapper's result. */
__attribute__((noinline)) static ssize_t write_rest(int fd, const void *buf, size_t n,
                                                    int flags, bool sockapi, size_t done)
{
    struct iovec v = { (char *)buf + done, n - done };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    ssize_t r = xfer_msg(fd, true, &m, flags, sockapi, false, done > 0);
    /* An error or cancel after progress reports the progress (xfer_msg). */
    if (done > 0)
        r = r > 0 ? (ssize_t)done + r : (ssize_t)done;
    return cap__ic_ret_cancel(r);
}

/* write and send: the direct path takes all of it, or an error before any
 * progress; the rest goes to write_rest. The wrapper's result. */
__attribute__((always_inline)) static inline ssize_t write_one(int fd, const void *buf,
                                                               size_t n, int flags,
                                                               bool sockapi)
{
    size_t done = 0;
    uint32_t fl;
    if (plain_stream_sock(fd, &fl) != NULL) {
        ssize_t r = cap__sys6(SYS_sendto, fd, (long)buf, (long)n, flags | MSG_DONTWAIT, 0, 0);
        if (r == (ssize_t)n || (r < 0 && r != -EAGAIN)) {
            if (r > 0)
                cap__io_turn_tick(); /* io.h: turns */
            return cap__ic_ret_cancel(r);
        }
        done = r > 0 ? (size_t)r : 0;
    }
    return write_rest(fd, buf, n, flags, sockapi, done);
}

/* writev past the direct path, which wrote done bytes of the vector (0 if
 * it did not apply): the general path for the rest, on a copy of the
 * vector past them; the wrapper's result. */
__attribute__((noinline)) static ssize_t writev_rest(int fd, const struct iovec *iov, int cnt,
                                                     size_t done)
{
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    if (done > 0 && cnt > STACK_IOVS && (v = malloc((size_t)cnt * sizeof *v)) == NULL)
        return cap__ic_ret((ssize_t)done); /* the progress, as after an error */
    struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
    if (done > 0) {
        memcpy(v, iov, (size_t)cnt * sizeof *v);
        m.msg_iov = v;
        cap__ic_msg_advance(&m, done);
    }
    ssize_t r = xfer_msg(fd, true, &m, 0, false, false, done > 0);
    if (v != stack_v)
        free(v);
    if (done > 0) /* an error or cancel after progress reports the progress */
        r = r > 0 ? (ssize_t)done + r : (ssize_t)done;
    return cap__ic_ret_cancel(r);
}

/* ---- the threads we do not run ------------------------------------------ */

/* Repeats a plain call on an emulated descriptor until it stops saying
 * EAGAIN, unless the call itself asked not to wait (nowait: MSG_DONTWAIT,
 * RWF_NOWAIT), whose EAGAIN is the answer; a transfer on a pipe we made
 * wakes the other end's waiters as ours do (io/pipe.h). A success leaves
 * errno as the caller had it, as the kernel's blocking call would (not
 * the EAGAIN of the tries before it). */
#define FOREIGN(call, fd, dir, nowait)                                           \
    do {                                                                         \
        int e_ = errno;                                                          \
        for (;;) {                                                               \
            ssize_t r_ = (call);                                                 \
            if (r_ >= 0) {                                                       \
                if (r_ > 0)                                                      \
                    cap__pipe_after_foreign_xfer(fd, (dir) == CAP__IO_WRITE);    \
                errno = e_;                                                      \
                return r_;                                                       \
            }                                                                    \
            if (errno != EAGAIN || (nowait) || !cap__ic_emulated(fd))            \
                return r_;                                                       \
            int w_ = cap__ic_foreign_wait(fd, dir);                              \
            if (w_ != 0) {                                                       \
                errno = -w_;                                                     \
                return -1;                                                       \
            }                                                                    \
        }                                                                        \
    } while (0)

/* ---- read / write ---------------------------------------------------------- */

/* ---- counts beyond the buffer ------------------------------------------------- */

/* The kernel's read, write, pread and pwrite check the whole range
 * [buf, buf + n) against the user address space before they move a byte,
 * failing with EFAULT when it does not fit however little the file holds,
 * and only then cut n to MAX_RW_COUNT. The calls that serve ours (recvfrom,
 * sendto, preadv2, io_uring) cut first and check what is left, so a count
 * far beyond the buffer (a program's bug, or (size_t)-1 for "all there
 * is") would have its bytes land past the buffer where libc fails. A
 * count above MAX_RW_COUNT is therefore checked by the kernel's own test:
 * a read or write of /dev/null makes it and moves nothing (the test is of
 * numbers only, so no other thread can change its answer). Without a
 * /dev/null (a bare chroot) no count is checked. */
enum { MAX_RW_COUNT = INT_MAX & ~4095 }; /* the kernel's, with 4 KiB pages */

static _Atomic int null_fd = -1;

static bool span_faults(bool write, void *buf, size_t n)
{
    int fd = atomic_load(&null_fd);
    if (fd < 0) {
        int mine = cap__ownfd_adopt(
            (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
        if (mine < 0)
            return false;
        if (atomic_compare_exchange_strong(&null_fd, &fd, mine))
            fd = mine;
        else /* another worker's open won: fd is its */
            syscall(SYS_close, mine);
    }
    return syscall(write ? SYS_write : SYS_read, fd, buf, n) < 0 && errno == EFAULT;
}

/* For the one-buffer calls, before anything else looks at n, when n is
 * above MAX_RW_COUNT (the caller tests that, inline: this is off every
 * hot path): a count the kernel would refuse gets the kernel's own answer
 * from the plain call, which fails before any I/O (its other checks,
 * EBADF and the like, come first as they do for libc); true then, with
 * that answer in *r. Otherwise false, and the caller cuts n to
 * MAX_RW_COUNT, as the kernel cuts it. */
static __attribute__((cold, noinline)) bool count_refused(int fd, bool write, void *buf,
                                                          size_t n, off_t off, ssize_t *r)
{
    if (!span_faults(write, buf, n))
        return false;
    long k = off == -1 ? syscall(write ? SYS_write : SYS_read, fd, buf, n)
                       : syscall(write ? SYS_pwrite64 : SYS_pread64, fd, buf, n, off);
    *r = k < 0 ? -errno : k;
    return true;
}

ssize_t read(int fd, void *buf, size_t n)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(read)(fd, buf, n), fd, CAP__IO_READ, false);
    ssize_t r;
    if (__builtin_expect(n > MAX_RW_COUNT, 0)) {
        if (count_refused(fd, false, buf, n, -1, &r))
            return cap__ic_ret(r);
        n = MAX_RW_COUNT;
    }
    if (read1(fd, buf, n, &r))
        return cap__ic_ret_cancel(r);
    return read_general(fd, buf, n, 0, false);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(write)(fd, buf, n), fd, CAP__IO_WRITE, false);
    ssize_t r;
    if (__builtin_expect(n > MAX_RW_COUNT, 0)) {
        if (count_refused(fd, true, (void *)buf, n, -1, &r))
            return cap__ic_ret(r);
        n = MAX_RW_COUNT;
    }
    return write_one(fd, buf, n, 0, false);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(readv)(fd, iov, cnt), fd, CAP__IO_READ, false);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt)) /* as writev's */
        return cap__ic_ret(cap__ic_sys(syscall(SYS_readv, fd, iov, cnt)));
    struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
    return cap__ic_ret_cancel(xfer(fd, false, &m, 0, false));
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(writev)(fd, iov, cnt), fd, CAP__IO_WRITE, false);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt)) /* the kernel's answer: 0, or EBADF, at once */
        return cap__ic_ret(cap__ic_sys(syscall(SYS_writev, fd, iov, cnt)));
    /* The direct path, as write's: one sendmsg of the whole vector (a
     * response's head and body), which the general path would make. */
    uint32_t fl;
    size_t done = 0;
    if (cnt > 0 && plain_stream_sock(fd, &fl) != NULL) {
        size_t want = 0;
        for (int i = 0; i < cnt; i++)
            want += iov[i].iov_len;
        struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
        ssize_t r = cap__sys6(SYS_sendmsg, fd, (long)&m, MSG_DONTWAIT, 0, 0, 0);
        if (r == (ssize_t)want || (r < 0 && r != -EAGAIN)) {
            if (r > 0)
                cap__io_turn_tick(); /* io.h: turns */
            return cap__ic_ret_cancel(r);
        }
        done = r > 0 ? (size_t)r : 0;
    }
    return writev_rest(fd, iov, cnt, done);
}

/* ---- sockets ---------------------------------------------------------------- */

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(recv)(fd, buf, n, flags), fd, CAP__IO_READ,
                (flags & MSG_DONTWAIT) || cap__ic_errqueue_never_waits(fd, flags));
    ssize_t r;
    if (flags == 0 && read1(fd, buf, n, &r))
        return cap__ic_ret_cancel(r);
    return read_general(fd, buf, n, flags, true);
}

/* recvfrom's address, received into name (klen bytes), copied out as
 * Linux's move_addr_to_user does, after the datagram was taken: EFAULT for
 * an unreadable or NULL length or an unwritable address, EINVAL for a
 * negative length; the datagram is consumed either way. */
static ssize_t name_out(const struct sockaddr_storage *name, socklen_t klen, void *addr,
                        socklen_t *alen)
{
    if (!cap__user_readable(alen, sizeof *alen))
        return -EFAULT;
    int len = (int)*alen;
    if (len > (int)klen)
        len = (int)klen;
    if (len < 0)
        return -EINVAL;
    if (len > 0) {
        if (!cap__user_writable(addr, (size_t)len))
            return -EFAULT;
        memcpy(addr, name, (size_t)len);
    }
    if (!cap__user_writable(alen, sizeof *alen))
        return -EFAULT;
    *alen = klen;
    return 0;
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, __SOCKADDR_ARG addr,
                 socklen_t *restrict alen)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(recvfrom)(fd, buf, n, flags, addr, alen), fd, CAP__IO_READ,
                (flags & MSG_DONTWAIT) || cap__ic_errqueue_never_waits(fd, flags));
    struct iovec v = { buf, n };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    struct sockaddr_storage name;
    if (addr.__sockaddr__ != NULL) {
        m.msg_name = &name;
        m.msg_namelen = sizeof name;
    }
    ssize_t r = xfer(fd, false, &m, flags, true);
    if (r >= 0 && addr.__sockaddr__ != NULL) {
        ssize_t e = name_out(&name, m.msg_namelen, addr.__sockaddr__, alen);
        if (e < 0)
            r = e;
    }
    return cap__ic_ret_cancel(r);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(recvmsg)(fd, msg, flags), fd, CAP__IO_READ,
                (flags & MSG_DONTWAIT) || cap__ic_errqueue_never_waits(fd, flags));
    int bad = msg_error(msg);
    if (bad != 0)
        return cap__ic_ret(bad);
    return cap__ic_ret_cancel(xfer_msg(fd, false, msg, flags, true, true, false));
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(send)(fd, buf, n, flags), fd, CAP__IO_WRITE, flags & MSG_DONTWAIT);
    /* MSG_NOSIGNAL and MSG_MORE change nothing on the runtime's side. */
    if ((flags & ~(MSG_NOSIGNAL | MSG_MORE)) == 0)
        return write_one(fd, buf, n, flags, true);
    struct iovec v = { (void *)buf, n };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    return cap__ic_ret_cancel(xfer(fd, true, &m, flags, true));
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG addr,
               socklen_t alen)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(sendto)(fd, buf, n, flags, addr, alen), fd, CAP__IO_WRITE,
                flags & MSG_DONTWAIT);
    struct iovec v = { (void *)buf, n };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1,
                        .msg_name = (void *)addr.__sockaddr__, .msg_namelen = alen };
    if (addr.__sockaddr__ == NULL)
        m.msg_namelen = 0;
    return cap__ic_ret_cancel(xfer(fd, true, &m, flags, true));
}

/* intercept.h. */
void cap__ic_rights_sending(const struct msghdr *msg)
{
    if (!cap__user_readable(msg, sizeof *msg) || msg->msg_control == NULL ||
        msg->msg_controllen < sizeof(struct cmsghdr) ||
        !cap__user_readable(msg->msg_control, msg->msg_controllen))
        return;
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c != NULL;
         c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const unsigned char *data = CMSG_DATA(c);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, data + i * sizeof fd, sizeof fd);
            cap__fd_shared(fd);
        }
    }
}

static ssize_t foreign_sendmsg(int fd, const struct msghdr *msg, int flags)
{
    FOREIGN(CAP__REAL(sendmsg)(fd, msg, flags), fd, CAP__IO_WRITE, flags & MSG_DONTWAIT);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter()) {
        cap__ic_rights_sending(msg);
        return foreign_sendmsg(fd, msg, flags);
    }
    int bad = msg_error(msg);
    if (bad != 0)
        return cap__ic_ret(bad);
    cap__ic_rights_sending(msg);
    struct msghdr m = *msg;
    return cap__ic_ret_cancel(xfer(fd, true, &m, flags, true));
}

/* ---- positioned transfers ------------------------------------------------------ */

/* preadv2/pwritev2 at the file position of a socket or of a pipe we made
 * (both take RWF_NOWAIT) with flags besides RWF_NOWAIT, which the
 * transfers below do not carry: the kernel judges them (EOPNOTSUPP for
 * one this file does not take) in a first call made with RWF_NOWAIT
 * too, so that it cannot block; its data stands, and only what it could
 * not do at once goes on the blocking way (the flags then known to be
 * taken, and meaningless there), unless the caller asked for RWF_NOWAIT. Other pollable files may refuse
 * RWF_NOWAIT itself, so cannot be asked so: their flags are dropped. */
static ssize_t flagged_first(cap__fd *f, int fd, bool write, const struct iovec *iov, int cnt,
                             int rwf, bool our_pipe)
{
    long r = syscall(write ? SYS_pwritev2 : SYS_preadv2, fd, iov, cnt, -1L, -1L,
                     rwf | RWF_NOWAIT);
    if (r > 0 && our_pipe)
        cap__pipe_after_xfer(f, write); /* a raw call on our pipe: wake its other end */
    if ((r < 0 && errno != EAGAIN) || (rwf & RWF_NOWAIT)) /* the caller's NOWAIT: this */
        return r < 0 ? -errno : r;
    size_t want = 0;
    for (int i = 0; i < cnt; i++)
        want += iov[i].iov_len;
    if (r >= 0 && (!write || (size_t)r == want))
        return r;
    size_t done = r > 0 ? (size_t)r : 0;
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    if (cnt > STACK_IOVS && (v = malloc((size_t)cnt * sizeof *v)) == NULL)
        return done > 0 ? (ssize_t)done : -ENOMEM;
    memcpy(v, iov, (size_t)cnt * sizeof *v);
    struct msghdr m = { .msg_iov = v, .msg_iovlen = (size_t)cnt };
    cap__ic_msg_advance(&m, done);
    ssize_t rest = xfer_msg(fd, write, &m, 0, false, false, done > 0);
    if (v != stack_v)
        free(v);
    if (done > 0) /* an error after progress reports the progress */
        return rest > 0 ? (ssize_t)done + rest : (ssize_t)done;
    return rest;
}

/* The kernel's preadv2/pwritev2, as asked. Also for the vector calls of
 * nothing: the kernel answers them before the file sees them (0, or
 * EBADF, ESPIPE...), at once; the disk layer would make a one-buffer one
 * a plain read or write, which the file does see (a directory's read
 * fails with EISDIR). */
static ssize_t raw_positioned(int fd, bool write, const struct iovec *iov, int cnt, off_t off,
                              int rwf)
{
    return cap__ic_sys(syscall(write ? SYS_pwritev2 : SYS_preadv2, fd, iov, cnt,
                               (unsigned long)off, (unsigned long)((unsigned long long)off >> 32),
                               rwf));
}

/* preadv2/pwritev2 semantics on a user thread. */
static ssize_t positioned(int fd, bool write, const struct iovec *iov, int cnt, off_t off,
                          int rwf)
{
    if (cnt < 0)
        return -EINVAL;
    cap__fd *f = cap__fd_get(fd);
    int kind = f != NULL ? cap__fd_classify(f, fd) : CAP__FD_UNKNOWN;
    if (kind == CAP__FD_FILE)
        return cap__disk_rw(write ? CAP__DISK_WRITE : CAP__DISK_READ, fd, iov, cnt, off, rwf);
    if ((kind == CAP__FD_SOCKET || kind == CAP__FD_STREAM) && off == -1) {
        bool our_pipe = kind == CAP__FD_STREAM && cap__fd_has(f, CAP__FDF_OWNED);
        /* The kernel refuses RWF_NOWAIT on this file this way (a FIFO, an
         * eventfd's writes, a terminal: known once seen, or from the
         * start for the FIFOs and eventfds the wrappers own). */
        bool nowait_ok =
            !cap__fd_has(f, write ? CAP__FDF_NOWAIT_BAD_WR : CAP__FDF_NOWAIT_BAD_RD);
        if ((rwf & ~RWF_NOWAIT) && (kind == CAP__FD_SOCKET || (our_pipe && nowait_ok)))
            return flagged_first(f, fd, write, iov, cnt, rwf, our_pipe);
        /* Another stream asked not to wait: the kernel's answer, which
         * cannot wait (a terminal or FIFO refuses with EOPNOTSUPP). */
        if ((rwf & RWF_NOWAIT) && kind == CAP__FD_STREAM && (!our_pipe || !nowait_ok))
            return raw_positioned(fd, write, iov, cnt, off, rwf);
        struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
        return xfer(fd, write, &m, (rwf & RWF_NOWAIT) ? MSG_DONTWAIT : 0, false);
    }
    /* Not seekable (ESPIPE), not open (EBADF), or beyond the table. */
    return raw_positioned(fd, write, iov, cnt, off, rwf);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(pread)(fd, buf, n, off);
    ssize_t r;
    if (__builtin_expect(n > MAX_RW_COUNT, 0) && off >= 0) {
        if (count_refused(fd, false, buf, n, off, &r))
            return cap__ic_ret(r);
        n = MAX_RW_COUNT;
    }
    if (cap__disk_pread_hot(fd, buf, n, off, &r)) /* the cached-read fast path */
        return cap__ic_ret(r);
    if (off < 0) /* the kernel's first check; -1 is no file position here */
        return cap__ic_ret(-EINVAL);
    struct iovec v = { buf, n };
    return cap__ic_ret_cancel(positioned(fd, false, &v, 1, off, 0));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(pwrite)(fd, buf, n, off);
    if (off < 0)
        return cap__ic_ret(-EINVAL);
    ssize_t r;
    if (__builtin_expect(n > MAX_RW_COUNT, 0)) {
        if (count_refused(fd, true, (void *)buf, n, off, &r))
            return cap__ic_ret(r);
        n = MAX_RW_COUNT;
    }
    struct iovec v = { (void *)buf, n };
    return cap__ic_ret_cancel(positioned(fd, true, &v, 1, off, 0));
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(preadv)(fd, iov, cnt, off);
    if (off < 0)
        return cap__ic_ret(-EINVAL);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt))
        return cap__ic_ret(raw_positioned(fd, false, iov, cnt, off, 0));
    return cap__ic_ret_cancel(positioned(fd, false, iov, cnt, off, 0));
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(pwritev)(fd, iov, cnt, off);
    if (off < 0)
        return cap__ic_ret(-EINVAL);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt))
        return cap__ic_ret(raw_positioned(fd, true, iov, cnt, off, 0));
    return cap__ic_ret_cancel(positioned(fd, true, iov, cnt, off, 0));
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(preadv2)(fd, iov, cnt, off, rwf), fd, CAP__IO_READ, rwf & RWF_NOWAIT);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt))
        return cap__ic_ret(raw_positioned(fd, false, iov, cnt, off, rwf));
    return cap__ic_ret_cancel(positioned(fd, false, iov, cnt, off, rwf));
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        FOREIGN(CAP__REAL(pwritev2)(fd, iov, cnt, off, rwf), fd, CAP__IO_WRITE, rwf & RWF_NOWAIT);
    int bad = iov_error(iov, cnt);
    if (bad != 0)
        return cap__ic_ret(bad);
    if (iov_empty(iov, cnt))
        return cap__ic_ret(raw_positioned(fd, true, iov, cnt, off, rwf));
    return cap__ic_ret_cancel(positioned(fd, true, iov, cnt, off, rwf));
}

/* On x86_64 off_t is 64 bits: the *64 names are the same functions. */
ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));
ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
    __attribute__((alias("preadv")));
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
    __attribute__((alias("pwritev")));
ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
    __attribute__((alias("preadv2")));
ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
    __attribute__((alias("pwritev2")));

/* ---- _FORTIFY_SOURCE entry points ---------------------------------------------- */

_Noreturn void __chk_fail(void);

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return read(fd, buf, n);
}

ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        __chk_fail();
    return recv(fd, buf, n, flags);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                       __SOCKADDR_ARG addr, socklen_t *restrict alen)
{
    if (n > buflen)
        __chk_fail();
    return recvfrom(fd, buf, n, flags, addr, alen);
}

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread(fd, buf, n, off);
}

ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
    __attribute__((alias("__pread_chk")));

/* ---- glibc helpers that call its internal read/write ---------------------------- */

/* eventfd_read and eventfd_write are read and write of 8 bytes, made
 * through glibc's internal names: a blocking eventfd_read of a zero
 * counter blocked the worker. Through our wrappers they park. */
int eventfd_read(int fd, eventfd_t *value)
{
    return read(fd, value, sizeof *value) == (ssize_t)sizeof *value ? 0 : -1;
}

int eventfd_write(int fd, eventfd_t value)
{
    return write(fd, &value, sizeof value) == (ssize_t)sizeof value ? 0 : -1;
}

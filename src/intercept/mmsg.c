/* SPDX-License-Identifier: MIT */
/*
 * recvmmsg and sendmmsg: several messages in one call.
 *
 * Linux's rules (net/socket.c), which these keep:
 *  - vlen is capped at UIO_MAXIOV;
 *  - a blocking recvmmsg waits for each message until vlen have come;
 *    MSG_WAITFORONE makes it non-blocking after the first; its timeout is
 *    looked at only after a message came (recvmmsg(2), BUGS), what is left
 *    of it is written back when any came, and a message with urgent data
 *    (MSG_OOB) ends the call; with MSG_WAITALL a stream socket's message
 *    is filled whole before the next (finish_message);
 *  - a blocking sendmmsg sends each message whole and stops after one it
 *    sent only in part (a signal, SO_SNDTIMEO);
 *  - an error after some messages: the count (the next call reports it).
 *
 * On a socket that is blocking in the application's view, each step is
 * one real call with MSG_DONTWAIT over the messages left, taking as many
 * as the socket holds at once (the point of these calls), and the thread
 * parks on the descriptor between steps (cap__io_do); the timeout goes to
 * every step as what is left of it, so the kernel applies its rule within
 * the step. Without this, the socket the runtime made non-blocking answered
 * a blocking recvmmsg with EAGAIN. On a thread we do not run, the same
 * steps wait in poll(2) (cap__ic_foreign_wait) on such a socket; on any
 * other descriptor the call goes straight to the kernel.
 *
 * An error met after some messages came: a pending socket error (POLLERR
 * before the next step) is left for the next call, as Linux keeps it; an
 * error of the step itself (a bad buffer in a later entry) is dropped and
 * the count returned.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "util/clock.h"

enum { STACK_IOVS = 8, NS_PER_S = 1000000000 };

struct step {
    struct mmsghdr *vec;
    unsigned vlen;
    int flags;
    bool after;          /* messages came in earlier steps of this call */
    uint64_t end;        /* recvmmsg's timeout, absolute; CAP__FOREVER: none */
    struct timespec *ts; /* passed as is when end is CAP__FOREVER */
};

/* What is left of a timeout ending at end. */
static struct timespec left_of(uint64_t end)
{
    uint64_t now = cap__now();
    return cap__ns_to_timespec(end > now ? end - now : 0);
}

static ssize_t recv_step(int fd, void *arg)
{
    struct step *s = arg;
    if (s->after && (cap__ic_revents_now(fd, 0) & POLLERR))
        return 0; /* ends the call: the error stays for the next one */
    struct timespec left, *ts = s->ts;
    if (s->end != CAP__FOREVER) {
        left = left_of(s->end);
        ts = &left;
    }
    return cap__sys6(SYS_recvmmsg, fd, (long)s->vec, s->vlen, s->flags | MSG_DONTWAIT, (long)ts,
                     0);
}

static ssize_t send_step(int fd, void *arg)
{
    struct step *s = arg;
    return cap__sys6(SYS_sendmmsg, fd, (long)s->vec, s->vlen, s->flags | MSG_DONTWAIT, 0, 0);
}

/* One step that waits while it would block: f is the record on a user
 * thread, NULL on a thread we do not run. >= 0 or -errno; -ETIMEDOUT at
 * the socket's timeout. */
static ssize_t wait_step(cap__fd *f, int fd, int dir, cap__io_attempt op, struct step *s,
                         const cap__intr *in)
{
    if (f != NULL)
        return cap__io_do(f, fd, dir, op, s, cap__io_deadline_later(f, dir), false, in, 0);
    for (;;) {
        ssize_t r = op(fd, s);
        if (r != -EAGAIN)
            return r;
        int w = cap__ic_foreign_wait(fd, dir);
        if (w != 0)
            return w == -EINTR ? w : -ETIMEDOUT;
    }
}

static size_t msg_bytes(const struct msghdr *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->msg_iovlen; i++)
        n += m->msg_iov[i].iov_len;
    return n;
}

/* The rest of message *m, of which a step moved only m->msg_len bytes
 * (a stream socket's buffer filled, or emptied under MSG_WAITALL): moved
 * by further steps of op, waiting while they would block, until the
 * message is whole or a step moves nothing (end of the stream, an error
 * left for the next call, a signal, the timeout). What moves is added to
 * m->msg_len. The name and the ancillary data went with the first part. */
static void finish_message(cap__fd *f, int fd, int dir, cap__io_attempt op, struct mmsghdr *m,
                           int flags, const cap__intr *in)
{
    struct msghdr *h = &m->msg_hdr;
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    if (h->msg_iovlen > STACK_IOVS && (v = malloc(h->msg_iovlen * sizeof *v)) == NULL)
        return;
    memcpy(v, h->msg_iov, h->msg_iovlen * sizeof *v);
    struct mmsghdr one = { .msg_hdr = *h };
    one.msg_hdr.msg_iov = v;
    one.msg_hdr.msg_name = NULL;
    one.msg_hdr.msg_namelen = 0;
    cap__ic_msg_advance(&one.msg_hdr, m->msg_len);
    while (one.msg_hdr.msg_iovlen > 0) {
        struct step s = { .vec = &one, .vlen = 1, .flags = flags, .after = true,
                          .end = CAP__FOREVER };
        if (wait_step(f, fd, dir, op, &s, in) <= 0 || one.msg_len == 0)
            break;
        m->msg_len += one.msg_len;
        cap__ic_msg_advance(&one.msg_hdr, one.msg_len);
    }
    if (v != stack_v)
        free(v);
}

/* Whether recvmmsg with flags fills each message of fd whole, as
 * MSG_WAITALL makes a stream socket's recvmsg do (not a peek: rw.c). */
static bool fills_whole(cap__fd *f, int fd, int flags)
{
    if ((flags & (MSG_WAITALL | MSG_PEEK)) != MSG_WAITALL)
        return false;
    if (f != NULL)
        return cap__fd_has(f, CAP__FDF_STREAM_SOCK);
    int type = 0;
    socklen_t len = sizeof type;
    return syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
           type == SOCK_STREAM;
}

static int recv_blocking(cap__fd *f, int fd, struct mmsghdr *vec, unsigned vlen, int flags,
                         struct timespec *timeout)
{
    uint64_t end = CAP__FOREVER;
    if (timeout != NULL) {
        if (!cap__user_readable(timeout, sizeof *timeout))
            return -EFAULT;
        if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= NS_PER_S)
            return -EINVAL;
        if ((uint64_t)timeout->tv_sec < CAP__FOREVER / NS_PER_S) /* else: never ends */
            end = cap__deadline_after((uint64_t)timeout->tv_sec * NS_PER_S +
                                      (uint64_t)timeout->tv_nsec);
    }
    uint64_t deadline = f != NULL ? cap__io_deadline_later(f, CAP__IO_READ) : CAP__FOREVER;
    cap__intr in = cap__ic_intr_cancel(deadline);
    bool whole = fills_whole(f, fd, flags);
    unsigned done = 0;
    ssize_t r;
    for (;;) {
        struct step s = { .vec = vec + done, .vlen = vlen - done,
                          .flags = flags & ~MSG_WAITFORONE, .after = done > 0, .end = end };
        r = wait_step(f, fd, CAP__IO_READ, recv_step, &s, &in);
        if (r <= 0)
            break;
        done += (unsigned)r;
        in.restart = false; /* as in send_blocking */
        /* Only the last message of a step can be short: the socket was
         * empty then. */
        struct mmsghdr *last = &vec[done - 1];
        if (whole && last->msg_len > 0 && last->msg_len < msg_bytes(&last->msg_hdr)) {
            finish_message(f, fd, CAP__IO_READ, recv_step, last, flags & ~MSG_WAITFORONE, &in);
            if (last->msg_len < msg_bytes(&last->msg_hdr))
                break;
        }
        if (done == vlen || (flags & MSG_WAITFORONE) ||
            (vec[done - 1].msg_hdr.msg_flags & MSG_OOB))
            break;
        if (end != CAP__FOREVER && cap__now() >= end)
            break;
    }
    if (done == 0)
        return r == -ETIMEDOUT ? -EAGAIN : (int)r;
    if (timeout != NULL) {
        if (!cap__user_writable(timeout, sizeof *timeout))
            return -EFAULT; /* as Linux: the messages came, the count is lost */
        *timeout = end == CAP__FOREVER ? *timeout : left_of(end);
    }
    return (int)done;
}

int recvmmsg(int fd, struct mmsghdr *vec, unsigned vlen, int flags, struct timespec *timeout)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (vlen > UIO_MAXIOV)
        vlen = UIO_MAXIOV;
    if (!cap__ic_enter()) {
        if ((flags & MSG_DONTWAIT) || !cap__ic_emulated(fd) ||
            cap__ic_errqueue_never_waits(fd, flags))
            return (int)syscall(SYS_recvmmsg, fd, vec, vlen, flags, timeout);
        return (int)cap__ic_ret(recv_blocking(NULL, fd, vec, vlen, flags, timeout));
    }
    cap__fd *f = cap__fd_get(fd);
    int kind = f != NULL ? cap__fd_classify(f, fd) : CAP__FD_UNKNOWN;
    if (kind != CAP__FD_SOCKET || vlen == 0) /* EBADF, ENOTSOCK, nothing asked */
        return (int)cap__ic_ret(cap__sys6(SYS_recvmmsg, fd, (long)vec, vlen, flags,
                                          (long)timeout, 0));
    if (cap__ic_nonblock(f) || (flags & MSG_DONTWAIT) ||
        cap__ic_errqueue_never_waits(fd, flags)) { /* intercept.h */
        struct step s = { .vec = vec, .vlen = vlen, .flags = flags, .end = CAP__FOREVER,
                          .ts = timeout };
        return (int)cap__ic_ret(cap__io_do(f, fd, CAP__IO_READ, recv_step, &s, CAP__FOREVER,
                                           true, NULL, 0));
    }
    return (int)cap__ic_ret_cancel(recv_blocking(f, fd, vec, vlen, flags, timeout));
}

static int send_blocking(cap__fd *f, int fd, struct mmsghdr *vec, unsigned vlen, int flags)
{
    uint64_t deadline = f != NULL ? cap__io_deadline_later(f, CAP__IO_WRITE) : CAP__FOREVER;
    cap__intr in = cap__ic_intr_cancel(deadline);
    unsigned done = 0;
    ssize_t r;
    for (;;) {
        struct step s = { .vec = vec + done, .vlen = vlen - done, .flags = flags };
        r = wait_step(f, fd, CAP__IO_WRITE, send_step, &s, &in);
        if (r <= 0)
            break;
        done += (unsigned)r;
        /* Messages went: a caught signal now ends the call with their
         * count, SA_RESTART or not, as Linux's (its next message's wait
         * fails, and the count is returned); a restartable wait would go
         * on waiting. */
        in.restart = false;
        struct mmsghdr *last = &vec[done - 1];
        size_t want = msg_bytes(&last->msg_hdr);
        if (last->msg_len < want) { /* a stream socket's buffer filled mid-message */
            /* Part of the message went: Linux's call returns that count
             * when the peer has gone, and raises no SIGPIPE. */
            finish_message(f, fd, CAP__IO_WRITE, send_step, last, flags | MSG_NOSIGNAL, &in);
            if (last->msg_len < want)
                break;
        }
        if (done == vlen)
            break;
    }
    if (done == 0)
        return r == -ETIMEDOUT ? -EAGAIN : (int)r;
    return (int)done;
}

int sendmmsg(int fd, struct mmsghdr *vec, unsigned vlen, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (vlen > UIO_MAXIOV)
        vlen = UIO_MAXIOV;
    if (cap__user_readable(vec, (size_t)vlen * sizeof *vec))
        for (unsigned i = 0; i < vlen; i++)
            cap__ic_rights_sending(&vec[i].msg_hdr); /* before the kernel takes them: rw.c */
    if (!cap__ic_enter()) {
        if ((flags & MSG_DONTWAIT) || !cap__ic_emulated(fd))
            return (int)syscall(SYS_sendmmsg, fd, vec, vlen, flags);
        return (int)cap__ic_ret(send_blocking(NULL, fd, vec, vlen, flags));
    }
    cap__fd *f = cap__fd_get(fd);
    int kind = f != NULL ? cap__fd_classify(f, fd) : CAP__FD_UNKNOWN;
    if (kind != CAP__FD_SOCKET || vlen == 0) /* EBADF, ENOTSOCK, nothing to send */
        return (int)cap__ic_ret(cap__sys6(SYS_sendmmsg, fd, (long)vec, vlen, flags, 0, 0));
    if (cap__ic_nonblock(f) || (flags & MSG_DONTWAIT)) {
        struct step s = { .vec = vec, .vlen = vlen, .flags = flags };
        int r = (int)cap__io_do(f, fd, CAP__IO_WRITE, send_step, &s, CAP__FOREVER, true, NULL,
                                0);
        return (int)cap__ic_ret(r);
    }
    return (int)cap__ic_ret_cancel(send_blocking(f, fd, vec, vlen, flags));
}

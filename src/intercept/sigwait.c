/* SPDX-License-Identifier: MIT */
/*
 * Waiting for signals: sigwait, sigwaitinfo, sigtimedwait and reads of a
 * signalfd. On a user thread they park only the caller.
 *
 * A signal sent to the waiting thread itself (pthread_kill, raise) waits
 * in its own pending set (io/sigdirect.h): taken first, and one sent
 * while the thread waits interrupts the wait (cap__intr.takes), which
 * then takes it. A signal every user thread blocks is blocked on every
 * worker's kernel thread too (io/sigmask.h), so it stays pending in the
 * kernel, where these calls find it. The wait first takes one without waiting
 * (rt_sigtimedwait with a zero timeout: the process's pending signals and
 * those sent to this kernel thread); if none is there, it parks on a
 * signalfd of the set, which the kernel makes readable when one arrives,
 * and tries again. A signal that some thread does not block is delivered
 * to a handler (or its default action) instead, as the kernel may do
 * with a thread that accepts it; POSIX asks the program to block the
 * set in every thread. A set the waiting thread itself does not block is
 * added to its mask for the wait, as Linux takes a signal of the set
 * out of the pending ones rather than deliver it to the waiter: a lone
 * thread gets it so too.
 *
 * As in Linux, sigwaitinfo and sigtimedwait fail with EINTR when a
 * handler of a signal outside the set interrupts them (io/sigintr.h:
 * the set counts as blocked for that choice) whatever SA_RESTART says,
 * and sigwait goes on waiting then, as glibc's does. All three are
 * cancellation points. sigtimedwait's timeout is measured on the
 * monotonic clock, as the kernel's is.
 *
 * signalfd() made by a user thread is non-blocking underneath (ours,
 * io/fd.h), so a blocking read parks like a read of a pipe. Elsewhere,
 * and in a handler, all of them are libc's.
 *
 * A read of such a signalfd (CAP__FDF_SIGNALFD; read and readv, through
 * rw.c) also takes the reading thread's own pending signals of the
 * signalfd's mask, which the kernel's signalfd cannot see: first, lowest
 * number first, as the kernel takes a thread's own before the process's;
 * then the kernel's records fill the rest of the buffer. Taken, a signal
 * is gone from the thread's set (sigpending, sigwait no longer see it).
 * A blocking read that parks is woken by a send to its thread of any
 * signal the thread blocks (cap__intr.wakes), reads the mask again and
 * takes it if the mask holds it, else parks again, so a mask changed
 * while it waits counts. One the thread does not block is delivered to
 * it instead, as to a running thread. The mask is the kernel's
 * (io/sigfd.h), read only when the thread has signals pending. Invariant:
 * a record is written only for a signal taken out of the set, and a
 * taken signal is always reported (the caller's buffer is checked before
 * the take).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/fd.h"
#include "io/io.h"
#include "io/sigdirect.h"
#include "io/sigfd.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "util/clock.h"

/* A signalfd of set for the runtime's own wait, registered as ours. */
static int wait_fd(const sigset_t *set)
{
    int fd = (int)syscall(SYS_signalfd4, -1, set, _NSIG / 8, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    cap__fd_created(fd, CAP__FD_STREAM, CAP__FDF_OWNED);
    return fd;
}

static void close_wait_fd(int fd)
{
    cap__fd_closing(fd);
    syscall(SYS_close, fd);
    cap__fd_closed(fd);
}

/* What sigwaitinfo reports of a signal sent to the thread (pthread_kill,
 * raise), as the kernel reports a tgkill. */
static void own_info(siginfo_t *info, int sig)
{
    memset(info, 0, sizeof *info);
    info->si_signo = sig;
    info->si_code = SI_TKILL;
    info->si_pid = getpid();
    info->si_uid = getuid();
}

/* The signal taken from set (info filled if not NULL), or -errno:
 * -EAGAIN once deadline passed, -EINTR, -ECANCELED. */
static long wait_signal(const sigset_t *set, siginfo_t *info, uint64_t deadline)
{
    cap__intr in = cap__intr_always;
    in.blocked = cap__sig_bits(set); /* the thread's mask is added to it */
    in.takes = in.blocked;
    in.cancel = true;
    cap__thread *self = cap__current();
    uint64_t mine = cap__sigmask_of(self);
    bool widened = (in.blocked & cap__sigmask_holdable() & ~mine) != 0;
    if (widened)
        cap__sigmask_set(self, mine | in.blocked);
    int fd = -1;
    long r;
    for (;;) {
        /* One sent to this thread first, as Linux takes a thread's own
         * pending signals before the process's. */
        int own = cap__sig_take_pending(self, in.takes);
        if (own != 0) {
            /* The sender's siginfo if it was the process's, routed here
             * (io/sigroute.h). */
            if (!cap__sig_route_claim(self, own, info) && info != NULL)
                own_info(info, own);
            r = own;
            break;
        }
        /* One of the process's that no thread accepted once the kernel
         * had delivered it (io/sigroute.h). */
        if ((r = cap__sig_route_take(in.takes, info)) != 0)
            break;
        struct timespec zero = { 0, 0 };
        r = cap__sys6(SYS_rt_sigtimedwait, (long)set, (long)info, (long)&zero, _NSIG / 8, 0, 0);
        if (r >= 0 || (r != -EAGAIN && r != -EINTR))
            break;
        if (r == -EINTR)
            continue; /* a signal came to this kernel thread just then */
        if (deadline != CAP__FOREVER && cap__now() >= deadline)
            break;
        if (fd < 0 && (fd = wait_fd(set)) < 0) {
            r = fd;
            break;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        r = cap__io_poll(&p, 1, deadline, &in);
        /* EINTR from a signal sent to this thread in the set: taken above. */
        if (r < 0 && !(r == -EINTR && (atomic_load(&self->sig_pending) & in.takes)))
            break;
    }
    if (fd >= 0)
        close_wait_fd(fd);
    if (widened)
        cap__sigmask_set(self, mine);
    return r;
}

/* What glibc's sigtimedwait and sigwaitinfo report of a signal taken:
 * SI_TKILL (the kernel's code for a tkill or tgkill, so for raise and
 * pthread_kill) becomes SI_USER; signalfd reads keep it. */
static long as_glibc_reports(long r, siginfo_t *info)
{
    if (r > 0 && info != NULL && info->si_code == SI_TKILL)
        info->si_code = SI_USER;
    return r;
}

/* -EFAULT unless set (and info, if any) can be used as the kernel would. */
static long check_args(const sigset_t *set, siginfo_t *info)
{
    if (!cap__user_readable(set, _NSIG / 8))
        return -EFAULT;
    if (info != NULL && !cap__user_writable(info, sizeof *info))
        return -EFAULT;
    return 0;
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    if (!cap__ic_enter())
        return CAP__REAL(sigtimedwait)(set, info, ts);
    long r = check_args(set, info);
    if (r == 0 && ts != NULL && !cap__user_readable(ts, sizeof *ts))
        r = -EFAULT;
    if (r == 0 && ts != NULL && !cap__ic_timespec_valid(ts))
        r = -EINVAL;
    if (r == 0)
        r = wait_signal(set, info,
                        ts == NULL ? CAP__FOREVER
                                   : cap__deadline_after(cap__timeout_ns((uint64_t)ts->tv_sec,
                                                                         (uint64_t)ts->tv_nsec)));
    return (int)cap__ic_ret_cancel(as_glibc_reports(r, info));
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    if (!cap__ic_enter())
        return CAP__REAL(sigwaitinfo)(set, info);
    long r = check_args(set, info);
    if (r == 0)
        r = wait_signal(set, info, CAP__FOREVER);
    return (int)cap__ic_ret_cancel(as_glibc_reports(r, info));
}

int sigwait(const sigset_t *set, int *sig)
{
    if (!cap__ic_enter())
        return CAP__REAL(sigwait)(set, sig);
    long r = check_args(set, NULL);
    if (r == 0 && !cap__user_writable(sig, sizeof *sig))
        r = -EFAULT;
    while (r == 0 || r == -EINTR) {
        r = wait_signal(set, NULL, CAP__FOREVER);
        /* A handler's jump out of the wait (handed to this thread, due as
         * the call returns): made now, or the wait would be interrupted
         * at once again and again. */
        cap__sig_take_jump();
    }
    if (r == -ECANCELED)
        cap__cancel_point();
    if (r < 0)
        return (int)-r;
    *sig = (int)r;
    return 0;
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
    if (fd != -1 || cap__in_signal_handler() || cap__current() == NULL)
        return CAP__REAL(signalfd)(fd, mask, flags);
    int r = (int)syscall(SYS_signalfd4, -1, mask, _NSIG / 8, flags | SFD_NONBLOCK);
    if (r >= 0)
        cap__fd_created(r, CAP__FD_STREAM,
                        CAP__FDF_OWNED | CAP__FDF_SIGNALFD |
                            ((flags & SFD_NONBLOCK) ? CAP__FDF_APP_NONBLOCK : 0));
    return r;
}

/* ---- reads of a signalfd ---------------------------------------------------- */

/* Records one read returns when it takes the thread's own signals (a read
 * may return fewer than fit; the rest wait for the next). */
enum { READ_RECORDS = 16 };

struct sfd_read {
    cap__fd *f;
    struct msghdr *msg;
    cap__thread *self;
    uint64_t mask; /* the signalfd's, once known */
    bool known;
};

static size_t iov_bytes(const struct msghdr *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->msg_iovlen; i++)
        n += m->msg_iov[i].iov_len;
    return n;
}

/* Whether the first n bytes of m's vector can be written. */
static bool iov_writable(const struct msghdr *m, size_t n)
{
    for (size_t i = 0; i < m->msg_iovlen && n > 0; i++) {
        size_t part = m->msg_iov[i].iov_len < n ? m->msg_iov[i].iov_len : n;
        if (part != 0 && !cap__user_writable(m->msg_iov[i].iov_base, part))
            return false;
        n -= part;
    }
    return true;
}

static void iov_scatter(const struct msghdr *m, const void *src, size_t n)
{
    const char *p = src;
    for (size_t i = 0; i < m->msg_iovlen && n > 0; i++) {
        size_t part = m->msg_iov[i].iov_len < n ? m->msg_iov[i].iov_len : n;
        memcpy(m->msg_iov[i].iov_base, p, part);
        p += part;
        n -= part;
    }
}

/* The kernel's read of the signalfd, which does not wait: the plain read
 * while the runtime owns it (non-blocking underneath), the ownership test
 * and the call one piece that a fork giving it back in between makes
 * start over (arch/ownedxfer.h); after that, a read that asks not to
 * wait (rw.c). Before, the plain read of a signalfd a fork had given
 * back blocked the worker until a signal came. */
static ssize_t kernel_read(cap__fd *f, int fd, const struct msghdr *m)
{
    long r = cap__ic_owned_rw(f, fd, false, m);
    if (r != CAP__ARCH_NOT_OWNED)
        return r;
    return cap__ic_stream_unowned(f, fd, false, m);
}

/* A signalfd record of info, as the kernel writes one (the fields its
 * si_code carries; the rest 0). */
static void record_of(struct signalfd_siginfo *rec, const siginfo_t *info)
{
    memset(rec, 0, sizeof *rec);
    rec->ssi_signo = (uint32_t)info->si_signo;
    rec->ssi_errno = info->si_errno;
    rec->ssi_code = info->si_code;
    rec->ssi_pid = (uint32_t)info->si_pid;
    rec->ssi_uid = (uint32_t)info->si_uid;
    if (info->si_signo == SIGCHLD && info->si_code > 0) {
        rec->ssi_status = info->si_status;
        rec->ssi_utime = (uint64_t)info->si_utime;
        rec->ssi_stime = (uint64_t)info->si_stime;
    } else if (info->si_code < 0) { /* sigqueue, timers, message queues */
        rec->ssi_int = info->si_value.sival_int;
        rec->ssi_ptr = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
        if (info->si_code == SI_TIMER) {
            rec->ssi_tid = (uint32_t)info->si_timerid;
            rec->ssi_overrun = (uint32_t)info->si_overrun;
        }
    }
}

/* One attempt (io/io.h, cap__io_attempt): the thread's own signals of the
 * mask, then the kernel's; the kernel's read alone when none is pending. */
static ssize_t sfd_attempt(int fd, void *arg)
{
    struct sfd_read *o = arg;
    if (atomic_load(&o->self->sig_pending) == 0)
        return kernel_read(o->f, fd, o->msg);
    if (!o->known) {
        o->mask = cap__sigfd_mask(fd);
        o->known = true;
    }
    if ((atomic_load(&o->self->sig_pending) & o->mask) == 0)
        return kernel_read(o->f, fd, o->msg);
    /* Too small a buffer, or a bad one: the kernel's answer, before
     * anything is taken (the kernel's own read would say EAGAIN to a bad
     * one when it has nothing, and a blocking read would never end). */
    size_t room = iov_bytes(o->msg) / sizeof(struct signalfd_siginfo);
    if (room == 0)
        return -EINVAL;
    if (!iov_writable(o->msg, room * sizeof(struct signalfd_siginfo)))
        return -EFAULT;
    if (room > READ_RECORDS)
        room = READ_RECORDS;
    struct signalfd_siginfo rec[READ_RECORDS];
    size_t n = 0;
    int sig;
    while (n < room && (sig = cap__sig_take_pending(o->self, o->mask)) != 0) {
        /* The sender's siginfo if it was the process's (io/sigroute.h),
         * else what the kernel reports of a tgkill from this process. */
        siginfo_t info;
        if (!cap__sig_route_claim(o->self, sig, &info))
            own_info(&info, sig);
        record_of(&rec[n++], &info);
    }
    if (n == 0) /* another taker was first (a handler's delivery) */
        return kernel_read(o->f, fd, o->msg);
    if (n < room) {
        struct iovec rest = { &rec[n], (room - n) * sizeof rec[0] };
        struct msghdr rest_msg = { .msg_iov = &rest, .msg_iovlen = 1 };
        ssize_t more = kernel_read(o->f, fd, &rest_msg);
        if (more > 0)
            n += (size_t)more / sizeof rec[0];
    }
    iov_scatter(o->msg, rec, n * sizeof rec[0]);
    return (ssize_t)(n * sizeof rec[0]);
}

ssize_t cap__ic_signalfd_read(cap__fd *f, int fd, struct msghdr *msg, bool nonblock)
{
    struct sfd_read o = { .f = f, .msg = msg, .self = cap__current() };
    ssize_t r = cap__io_do(f, fd, CAP__IO_READ, sfd_attempt, &o, CAP__FOREVER, true, NULL, 0);
    if (r != -EAGAIN || nonblock)
        return r;
    /* It parks, woken to look again by a send to this thread of any
     * signal it blocks (cap__intr.wakes), not just of the mask it read:
     * the mask may change while it waits (signalfd(fd, mask) by another
     * thread), and a send of a signal only the new mask holds must end
     * the read, as on Linux. The mask is read again after each wake-up;
     * the sends counted before a look (c.sends) make a send between the
     * look and the park refuse the park (io/wait.c). A signal it does not
     * block is delivered to it, as to a running thread. */
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    in.wakes = UINT64_MAX;
    cap__io_call c;
    cap__io_call_begin(&c, &in, false);
    for (;;) {
        cap__io_ticket tk;
        cap__io_prepare(&tk, f, fd, CAP__IO_READ);
        c.sends = atomic_load(&o.self->sig_sends);
        o.known = false;
        r = sfd_attempt(fd, &o);
        if (r != -EAGAIN) {
            if (r >= 0 && __atomic_load_n(&f->head[CAP__IO_READ], __ATOMIC_RELAXED) != NULL)
                cap__io_handoff(f, fd, CAP__IO_READ);
            break;
        }
        int rc = cap__io_wait(&tk, CAP__FOREVER, &c);
        if (rc == EBADF || rc == EINTR || rc == ECANCELED) {
            r = -rc;
            break;
        }
        /* EPERM (no backend can watch it) is not expected of a signalfd;
         * it would look again at once. */
    }
    cap__io_call_end(&c);
    return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * Reads and writes of a terminal on a user thread, where the application
 * left it blocking (rw.c sends them here; its O_NONBLOCK view keeps the
 * general path, whose plain call does not wait, and preadv2/pwritev2 with
 * RWF_NOWAIT get the kernel's EOPNOTSUPP).
 *
 * A terminal refuses RWF_NOWAIT and is not ours to make non-blocking (a
 * terminal is shared with the shell and the other processes of its
 * session), so the general path's "readiness, then the plain call" would
 * be the rule; but a terminal's blocking read does not end on readiness
 * alone, and its blocking write waits until every byte is queued:
 *  - read, canonical mode: poll reports a whole line (or end of file, or
 *    a hang-up), which the plain call then returns at once: readiness,
 *    then the plain call;
 *  - read, non-canonical, VMIN = 0 and VTIME = 0: the plain call, which
 *    returns what is there, perhaps nothing, at once;
 *  - VMIN = 0, VTIME = t: the first byte or t tenths of a second,
 *    whichever comes first; 0 at the timeout: readiness with that
 *    deadline, then the plain call;
 *  - VMIN = m, VTIME = 0: m bytes (poll waits for m itself), or the
 *    buffer full if it is smaller than m: readiness then the plain call,
 *    or, for a buffer smaller than m, the call on the pool unless enough
 *    is there already;
 *  - VMIN = m, VTIME = t: the first byte without bound, then m bytes (or
 *    the buffer full) or a gap of t between two bytes: readiness for the
 *    first byte, then the plain call if enough is there, else the call on
 *    the offload pool, where the kernel times the gaps;
 *  - write: poll promises room for one byte, not for the call's; the
 *    plain call would block the worker until a reader makes room, and
 *    forever if that reader is a thread parked on the same worker (a
 *    program driving a pseudo-terminal). So a pseudo-terminal's slave is
 *    written through the library's own non-blocking description of it
 *    (io/ttyfile.h): readiness, then the plain call there, parking for
 *    room between the parts of a write that does not fit, the terminal
 *    held for the whole write against the process's other writes. Other
 *    terminals (and a slave the library cannot open again): readiness,
 *    then the call on the pool.
 * Parks before the pool hold no pool thread: a stopped terminal or one
 * nobody types at costs nothing there. A call on the pool ends for a
 * signal or a cancel as the kernel's would (io/offload.c); one that moved
 * bytes returns their count. VTIME's timeout counts from the call's start
 * and is not restarted by a SA_RESTART handler (the kernel's is). Between
 * readiness and a plain call another reader of the terminal may take the
 * bytes, and the plain call then blocks the worker until more come (the
 * race every "readiness, then the plain call" path has, rw.c).
 * stdio input on a terminal (stdin.c) waits before glibc's refill, which
 * reads what is there: cap__ic_tty_input_wait says how long for VMIN = 0
 * (not at all, or VTIME), and, with VMIN and VTIME both set, that the
 * refill, whose read then waits out the gaps between bytes, must run on
 * the offload pool once the first byte is there.
 * A pseudo-terminal's slave whose master closes: a read waiting in the
 * kernel fails with EIO, one made after the hang-up returns 0; a read
 * that waited here and finds the hang-up says EIO too.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <termios.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/ttyfile.h"

/* What the attempt does once the terminal is ready. */
enum tty_then {
    THEN_PLAIN, /* the plain call: it returns at once */
    THEN_POOL,  /* the plain call on the pool, unless `enough` bytes are queued */
};

struct tty_op {
    struct msghdr *msg;
    int priv; /* a write's private description (io/ttyfile.h); -1: none */
    cap__ttyfile *tf; /*   its entry, and whether the write holds the terminal */
    bool locked;
    cap__fd *f;
    bool write;
    enum tty_then then;
    size_t enough; /* THEN_POOL reads: queued bytes for which the plain call returns at once */
    bool to_pool;  /* set by the attempt: make the call on the pool */
    bool waited;   /* the attempt found the terminal not ready once */
};

static long plain(int fd, const struct tty_op *o)
{
    return cap__sys6(o->write ? SYS_writev : SYS_readv, fd, (long)o->msg->msg_iov,
                     (long)o->msg->msg_iovlen, 0, 0, 0);
}

/* Bytes the terminal holds for reading (non-canonical mode: all of them). */
static size_t queued(int fd)
{
    int n = 0;
    if (cap__sys6(SYS_ioctl, fd, FIONREAD, (long)&n, 0, 0, 0) != 0 || n < 0)
        return 0;
    return (size_t)n;
}

/* Whether fd is the slave side of a pseudo-terminal (UNIX98: majors
 * 136-143). */
static bool pty_slave(int fd)
{
    struct stat st;
    if (cap__sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0 || !S_ISCHR(st.st_mode))
        return false;
    unsigned maj = major(st.st_rdev);
    return maj >= 136 && maj <= 143;
}

static ssize_t attempt(int fd, void *arg)
{
    struct tty_op *o = arg;
    short got = cap__ic_revents_now(fd, o->write ? POLLOUT : POLLIN);
    if (got == 0) {
        o->waited = true;
        return -EAGAIN;
    }
    if (o->then == THEN_POOL && (o->write || (got & POLLIN) == 0 || queued(fd) < o->enough)) {
        o->to_pool = true;
        return 0;
    }
    long r = plain(fd, o);
    /* The master closed while this read waited: the kernel's waiting
     * read sees the other side closed (EIO); a read made after the
     * hang-up that followed finds end of file, as ours just did. */
    if (r == 0 && o->waited && !o->write && (got & POLLHUP) && pty_slave(fd))
        return -EIO;
    return r;
}

/* A write's attempt on the terminal's private description: the plain
 * call there never blocks. Readiness first: every write, one that takes
 * nothing too, wakes the terminal's write waiters (tty_write_unlock), and
 * a writer of ours woken so while a signal is sent to it could miss the
 * signal's interruption (it is not parked at that moment); asked first,
 * poll says when there is no room, and the writer parks without writing.
 * A write that still takes nothing found the room too small for the
 * terminal's next buffer, or another writer holding the terminal's write
 * lock: the pool's blocking call waits for either. The terminal is held
 * for the whole write (cap__ttyfile_trylock), as the kernel holds its
 * write lock, so the writes of the process do not mix. */
static ssize_t priv_attempt(int fd, void *arg)
{
    struct tty_op *o = arg;
    if (!o->locked) {
        if (!cap__ttyfile_trylock(o->tf)) {
            /* Another write of ours holds the terminal. The event that
             * woke this one may have been the room that write waits for:
             * passed on, or that write would wait for ever. */
            cap__io_handoff(o->f, fd, CAP__IO_WRITE);
            return -EAGAIN;
        }
        o->locked = true;
    }
    if (cap__ic_revents_now(fd, POLLOUT) == 0)
        return -EAGAIN;
    long r = cap__sys6(SYS_writev, o->priv, (long)o->msg->msg_iov, (long)o->msg->msg_iovlen, 0,
                       0, 0);
    if (r != -EAGAIN)
        return r;
    o->to_pool = true;
    return 0;
}

static ssize_t on_pool(int fd, const struct tty_op *o, const cap__intr *in)
{
    cap__sys_call c = { o->write ? SYS_writev : SYS_readv,
                        { fd, (long)o->msg->msg_iov, (long)o->msg->msg_iovlen }, 0 };
    return cap__ic_offload_sys(&c, in);
}

/* Readiness (until deadline), then what o says. -ETIMEDOUT at the deadline. */
static ssize_t wait_then(cap__fd *f, int fd, struct tty_op *o, uint64_t deadline,
                         const cap__intr *in)
{
    ssize_t r = cap__io_do(f, fd, o->write ? CAP__IO_WRITE : CAP__IO_READ, attempt, o,
                           deadline, false, in, 0);
    return o->to_pool && r == 0 ? on_pool(fd, o, in) : r;
}

/* The deadline VTIME tenths of a second from now. */
static uint64_t vtime_deadline(cc_t vtime)
{
    return cap__deadline_after((uint64_t)vtime * 100000000ULL);
}

static size_t total(const struct msghdr *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->msg_iovlen; i++)
        n += m->msg_iov[i].iov_len;
    return n;
}

static ssize_t tty_read(cap__fd *f, int fd, struct tty_op *o, const cap__intr *in)
{
    struct termios t;
    size_t n = total(o->msg);
    if (n == 0 || tcgetattr(fd, &t) != 0) /* nothing asked, or gone: the plain call says */
        return plain(fd, o);
    if (t.c_lflag & ICANON)
        return wait_then(f, fd, o, CAP__FOREVER, in);
    size_t vmin = t.c_cc[VMIN], vtime = t.c_cc[VTIME];
    if (vmin == 0 && vtime == 0)
        return plain(fd, o);
    if (vmin == 0) {
        ssize_t r = wait_then(f, fd, o, vtime_deadline((cc_t)vtime), in);
        return r == -ETIMEDOUT ? 0 : r;
    }
    o->enough = vmin < n ? vmin : n;
    if (vtime == 0 && vmin <= n)
        return wait_then(f, fd, o, CAP__FOREVER, in); /* poll waits for VMIN bytes */
    o->then = THEN_POOL;
    if (vtime == 0) /* a buffer smaller than VMIN: poll would wait for VMIN */
        return queued(fd) >= n ? plain(fd, o) : on_pool(fd, o, in);
    return wait_then(f, fd, o, CAP__FOREVER, in);
}

enum { STACK_IOVS = 8 };

/* A blocking write: every byte, through the private description where
 * the terminal has one, parking for room between the parts; else
 * readiness, then the call on the pool. A part written and then a signal
 * or a close: the count so far, as the kernel's write returns. */
static ssize_t tty_write(cap__fd *f, int fd, struct tty_op *o, const cap__intr *in_call)
{
    cap__ttyfile *t = cap__ttyfile_hold(fd, atomic_load(&f->gen));
    if (t == NULL) {
        o->then = THEN_POOL;
        return wait_then(f, fd, o, CAP__FOREVER, in_call);
    }
    o->priv = cap__ttyfile_fd(t);
    o->tf = t;
    o->f = f;
    cap__intr in = *in_call;
    size_t want = total(o->msg), done = 0;
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    struct msghdr m = *o->msg;
    bool copied = false;
    ssize_t r;
    for (;;) {
        r = cap__io_do(f, fd, CAP__IO_WRITE, priv_attempt, o, CAP__FOREVER, false, &in, 0);
        if (o->to_pool && r == 0) {
            o->to_pool = false;
            r = on_pool(fd, o, &in);
        }
        if (r <= 0)
            break;
        done += (size_t)r;
        if (done >= want)
            break;
        /* Bytes went out: a signal now ends the call with their count,
         * SA_RESTART or not, as the kernel's write does. */
        in.restart = false;
        if (!copied) {
            if (m.msg_iovlen > STACK_IOVS && (v = malloc(m.msg_iovlen * sizeof *v)) == NULL)
                break;
            memcpy(v, m.msg_iov, m.msg_iovlen * sizeof *v);
            m.msg_iov = v;
            o->msg = &m;
            copied = true;
        }
        cap__ic_msg_advance(&m, (size_t)r);
    }
    if (o->locked)
        cap__ttyfile_unlock(t);
    cap__ttyfile_release(t);
    if (v != stack_v)
        free(v);
    return done > 0 ? (ssize_t)done : r;
}

/* intercept.h. */
bool cap__ic_is_tty(cap__fd *f, int fd)
{
    if (cap__fd_has(f, CAP__FDF_TTY))
        return true;
    if (cap__fd_has(f, CAP__FDF_NOT_TTY))
        return false;
    struct termios t;
    bool tty = cap__sys6(SYS_ioctl, fd, TCGETS, (long)&t, 0, 0, 0) == 0;
    cap__fd_set(f, tty ? CAP__FDF_TTY : CAP__FDF_NOT_TTY);
    return tty;
}

/* intercept.h. */
int cap__ic_tty_input_wait(int fd, uint64_t *deadline)
{
    struct termios t;
    if (tcgetattr(fd, &t) != 0 || (t.c_lflag & ICANON))
        return CAP__TTY_IN_WAIT;
    if (t.c_cc[VMIN] != 0)
        return t.c_cc[VTIME] != 0 ? CAP__TTY_IN_WAIT_THEN_POOL : CAP__TTY_IN_WAIT;
    if (t.c_cc[VTIME] == 0)
        return CAP__TTY_IN_NO_WAIT;
    *deadline = vtime_deadline(t.c_cc[VTIME]);
    return CAP__TTY_IN_WAIT;
}

/* intercept.h. */
ssize_t cap__ic_tty_xfer(cap__fd *f, int fd, bool write, struct msghdr *msg, const cap__intr *in)
{
    struct tty_op o = { .msg = msg, .priv = -1, .write = write, .then = THEN_PLAIN };
    if (!write)
        return tty_read(f, fd, &o, in);
    if (total(msg) == 0)
        return plain(fd, &o);
    return tty_write(f, fd, &o, in);
}

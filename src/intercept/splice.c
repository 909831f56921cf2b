/* SPDX-License-Identifier: MIT */
/*
 * splice, tee and vmsplice: transfers the kernel makes between a pipe and
 * another descriptor (or user memory) without the data passing through
 * the wrappers.
 *
 * What the kernel's calls wait for, and what makes them not wait (Linux,
 * fs/splice.c): splice and tee wait for data in the input and room in
 * the output unless SPLICE_F_NONBLOCK is given or a pipe they name is
 * O_NONBLOCK; a socket side waits unless the socket is O_NONBLOCK;
 * vmsplice waits unless SPLICE_F_NONBLOCK is given (the pipe's own
 * O_NONBLOCK does not count). A regular file side never "waits" in that
 * sense (its device reads and writes block, as a read would).
 *
 * Here the call is always made with SPLICE_F_NONBLOCK, and the pipes and
 * sockets the runtime made are non-blocking underneath, so it returns at
 * once; a side that is neither ours nor a pipe (an inherited socket, a
 * terminal) is asked for readiness first, so its part does not wait
 * either; a blocking socket output that is not ours takes everything
 * the call gives it before it returns, so the call gives it no more than
 * the room readiness promises (cap__ic_send_room). EAGAIN then means
 * "would wait": unless the application asked for that answer (the flag,
 * or its own O_NONBLOCK view of a pipe or socket it names, as the
 * kernel's rules above say), the calling thread parks on the side that
 * is not ready (the input for data, the output for room) and tries
 * again; a user thread parks, any other thread waits in poll(2).
 * Before, the pipes were given back to blocking mode and the call
 * blocked the worker, and a socket the runtime made (non-blocking
 * underneath) answered EAGAIN to a program that believed it blocking.
 *
 * Signals interrupt a wait as the kernel's (EINTR, restarted under
 * SA_RESTART); SO_RCVTIMEO / SO_SNDTIMEO of a socket side end it with
 * EAGAIN; all three are cancellation points, on entry and while parked,
 * as glibc makes them. A pipe they name stops being private (io/pipe.h):
 * the kernel moves data the wrappers do not see.
 * A side that polls ready while the call still says EAGAIN (possible
 * only for exotic descriptors) is retried after a yield. A file input
 * whose range is not in the page cache would be read from the device
 * by the call, on the worker: it is read through the disk backend first
 * (io/disk_warm.c), on a user thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/pipe.h"

enum move_kind { MOVE_SPLICE, MOVE_TEE, MOVE_VMSPLICE };

/* One call and what its waits need. For vmsplice `in` is the pipe, and
 * `out` is -1; its direction is in `vm_write`. */
struct move {
    enum move_kind kind;
    int in, out;
    loff_t *off_in, *off_out;
    const struct iovec *iov;
    size_t len; /* splice, tee: bytes; vmsplice: segments */
    unsigned flags;
    bool vm_write; /* vmsplice into the pipe (its write end) */
};

static long call_now(const struct move *m)
{
    unsigned fl = m->flags | SPLICE_F_NONBLOCK;
    switch (m->kind) {
    case MOVE_SPLICE:
        return cap__sys6(SYS_splice, m->in, (long)m->off_in, m->out, (long)m->off_out,
                         (long)m->len, fl);
    case MOVE_TEE:
        return cap__sys6(SYS_tee, m->in, m->out, (long)m->len, fl, 0, 0);
    case MOVE_VMSPLICE:
        return cap__sys6(SYS_vmsplice, m->in, (long)m->iov, (long)m->len, fl, 0, 0);
    }
    return -EINVAL;
}

/* What a side of the call is, from one fstat. */
enum side { SIDE_CLOSED, SIDE_PIPE, SIDE_FILE, SIDE_SOCKET, SIDE_OTHER };

static enum side side_of(int fd)
{
    struct stat st;
    if (cap__sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0)
        return SIDE_CLOSED;
    if (S_ISFIFO(st.st_mode))
        return SIDE_PIPE;
    if (S_ISSOCK(st.st_mode))
        return SIDE_SOCKET;
    return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ? SIDE_FILE : SIDE_OTHER;
}

/* The application's view of fd's O_NONBLOCK: the record's, or the
 * kernel's for a number beyond the table. */
static bool view_nonblock(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f != NULL)
        return cap__ic_nonblock(f);
    long fl = cap__sys6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* Whether a side of kind k could make the kernel's call wait although
 * the call says SPLICE_F_NONBLOCK: neither a pipe, a file nor non-blocking
 * underneath (an inherited socket, a terminal, a device). */
static bool may_block(int fd, enum side k)
{
    cap__fd *f = cap__fd_peek(fd);
    return (k == SIDE_SOCKET || k == SIDE_OTHER) &&
           (f == NULL || !cap__fd_has(f, CAP__FDF_OWNED));
}

struct plan {
    bool app_nonblock; /* the application asked for EAGAIN rather than a wait */
    bool check_in;     /* the input may block in the kernel: readiness first */
    bool check_out;    /* the same for the output */
    bool file_in;      /* splice out of a file: a cold range is read first */
    bool room_out;     /* into a blocking socket not ours: no more than its room */
};

static struct plan plan_for(const struct move *m)
{
    struct plan p = { .app_nonblock = (m->flags & SPLICE_F_NONBLOCK) != 0 };
    if (m->kind == MOVE_VMSPLICE)
        return p; /* only the flag counts */
    enum side in = side_of(m->in), out = side_of(m->out);
    if (in == SIDE_CLOSED || out == SIDE_CLOSED)
        return p; /* the call says EBADF */
    /* A pipe's O_NONBLOCK counts (both, for two pipes: fs/splice.c); a
     * socket side's too (its receive or send waits follow it). */
    if ((in != SIDE_FILE && view_nonblock(m->in)) || (out != SIDE_FILE && view_nonblock(m->out)))
        p.app_nonblock = true;
    p.check_in = may_block(m->in, in);
    p.check_out = may_block(m->out, out);
    p.file_in = m->kind == MOVE_SPLICE && in == SIDE_FILE;
    p.room_out = m->kind == MOVE_SPLICE && out == SIDE_SOCKET && p.check_out && !p.app_nonblock;
    return p;
}

struct attempt_arg {
    const struct move *m;
    const struct plan *p;
    int park_fd, park_dir;
    bool other_side; /* set by the attempt: the side parked on is ready, the other is not */
};

static bool ready(int fd, int dir)
{
    return cap__ic_revents_now(fd, dir == CAP__IO_READ ? POLLIN : POLLOUT) != 0;
}

static long try_move(const struct move *m, const struct plan *p)
{
    if (p->check_in && !ready(m->in, CAP__IO_READ))
        return -EAGAIN;
    if (p->check_out && !ready(m->out, CAP__IO_WRITE))
        return -EAGAIN;
    if (p->room_out) {
        /* The kernel's send into a blocking socket returns only once it
         * has queued all it was given (up to the pipe's content: 64 KiB
         * by default, more after F_SETPIPE_SZ), which held the worker
         * until the peer read: no more than the room readiness promises,
         * and a short count, which splice may return. */
        struct move held = *m;
        size_t room = cap__ic_send_room(m->out);
        if (held.len > room)
            held.len = room;
        return call_now(&held);
    }
    return call_now(m);
}

static ssize_t attempt(int fd, void *arg)
{
    struct attempt_arg *a = arg;
    long r = try_move(a->m, a->p);
    if (r == -EAGAIN && ready(fd, a->park_dir)) {
        a->other_side = true; /* choose again (below) */
        return 0;
    }
    return r;
}

/* The side to wait on after an EAGAIN: the input if it has nothing, else
 * the output if it has no room; false if both look ready. */
static bool side_to_wait(const struct move *m, int *fd, int *dir)
{
    if (m->kind == MOVE_VMSPLICE) {
        *fd = m->in;
        *dir = m->vm_write ? CAP__IO_WRITE : CAP__IO_READ;
        return !ready(*fd, *dir);
    }
    if (!ready(m->in, CAP__IO_READ)) {
        *fd = m->in;
        *dir = CAP__IO_READ;
        return true;
    }
    if (!ready(m->out, CAP__IO_WRITE)) {
        *fd = m->out;
        *dir = CAP__IO_WRITE;
        return true;
    }
    return false;
}

static long move_on_user_thread(const struct move *whole, const struct plan *p)
{
    /* Out of a file, whose device reads the kernel's call makes on the
     * worker: the range it will read is read through the disk backend
     * first where it is not cached, and the call held to it
     * (io/disk_warm.c). */
    struct move held = *whole;
    const struct move *m = &held;
    if (p->file_in)
        cap__disk_warm(held.in, held.off_in != NULL ? (off_t)*held.off_in : -1, &held.len);
    for (;;) {
        long r = try_move(m, p);
        if (r != -EAGAIN || p->app_nonblock)
            return r;
        struct attempt_arg a = { .m = m, .p = p };
        if (!side_to_wait(m, &a.park_fd, &a.park_dir)) {
            cap__yield(cap__current()); /* both sides poll ready: look again later */
            continue;
        }
        cap__fd *f = cap__fd_get(a.park_fd);
        if (f == NULL || cap__fd_classify(f, a.park_fd) == CAP__FD_BAD)
            return call_now(m); /* beyond the table, or closed: the kernel says */
        uint64_t deadline = cap__io_deadline(f, a.park_dir);
        cap__intr in = cap__ic_intr_cancel(deadline);
        r = cap__io_do(f, a.park_fd, a.park_dir, attempt, &a, deadline, false, &in, 0);
        if (r == 0 && a.other_side)
            continue;
        return r == -ETIMEDOUT ? -EAGAIN : r;
    }
}

static long move_elsewhere(const struct move *m, const struct plan *p)
{
    for (;;) {
        long r = try_move(m, p);
        if (r != -EAGAIN || p->app_nonblock)
            return r;
        int fd, dir;
        if (!side_to_wait(m, &fd, &dir)) {
            sched_yield();
            continue;
        }
        int w = cap__ic_foreign_wait(fd, dir);
        if (w != 0)
            return w; /* -EAGAIN: the socket's timeout; or -EINTR */
    }
}

static long move(const struct move *m)
{
    cap__pipe_escape_fd(m->in);
    if (m->out >= 0)
        cap__pipe_escape_fd(m->out);
    struct plan p = plan_for(m);
    if (cap__ic_user())
        return cap__ic_ret_cancel(move_on_user_thread(m, &p));
    return cap__ic_ret(move_elsewhere(m, &p));
}

ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t len, unsigned flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    cap__ic_enter(); /* a cancellation point on entry, as glibc's */
    struct move m = { .kind = MOVE_SPLICE, .in = in, .out = out, .off_in = off_in,
                      .off_out = off_out, .len = len, .flags = flags };
    return move(&m);
}

ssize_t tee(int in, int out, size_t len, unsigned flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    cap__ic_enter();
    struct move m = { .kind = MOVE_TEE, .in = in, .out = out, .len = len, .flags = flags };
    return move(&m);
}

ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    cap__ic_enter();
    long fl = cap__sys6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
    struct move m = { .kind = MOVE_VMSPLICE, .in = fd, .out = -1, .iov = iov, .len = n,
                      .flags = flags, .vm_write = fl >= 0 && (fl & O_ACCMODE) != O_RDONLY };
    return move(&m);
}

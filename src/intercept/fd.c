/* SPDX-License-Identifier: MIT */
/*
 * Descriptor lifetimes and flags: open*, creat, pipe, pipe2, eventfd, dup, dup2,
 * dup3, close, close_range, closefrom, fcntl, ioctl(FIONBIO) (the stdio
 * and directory calls that close descriptors are in stream.c).
 *
 * These keep the descriptor table (io/fd.h) true to the kernel's:
 *  - every number the application gets from us starts a fresh life, and
 *    every close we see (including dup2 onto a number, close_range,
 *    closefrom, and the stdio calls of stream.c, which glibc would do
 *    through its internal close) ends one, disarming it in the backend
 *    and waking its waiters with EBADF;
 *  - open of a FIFO, the one kind of open that waits for another party,
 *    runs on the offload pool so that only the caller waits. The test is
 *    a stat of the path, skipped for flags that cannot wait (O_NONBLOCK,
 *    O_PATH, O_CREAT|O_EXCL, O_TMPFILE). A path that becomes a FIFO
 *    between the stat and the open is opened on the worker (and may
 *    block it, as before); one that stops being a FIFO is opened on the
 *    pool, only slower. Such an open is not interrupted by signals;
 *  - on a socket the runtime owns, fcntl(F_SETFL) and ioctl(FIONBIO)
 *    change only the application's view of O_NONBLOCK (the descriptor
 *    stays non-blocking underneath) and F_GETFL reports that view; the
 *    view is the file's, so every dup of the number follows (io/fd.h);
 *  - dup2/dup3 of an owned socket onto 0, 1 or 2 (handing it to a child
 *    process as stdin/stdout) gives it back the blocking mode the
 *    application believes it has, and the runtime stops owning it.
 * Pipes are owned too (created non-blocking, so a transfer is a plain
 * read or write: preadv2/pwritev2 with RWF_NOWAIT cost ~90 ns more per
 * call in the kernel). Because a pipe is what children are given, every
 * owned pipe is disowned (made blocking again, io/fd.h) before a child
 * process is made (fork, posix_spawn: spawn.c), when one is dup'ed onto
 * 0, 1 or 2, and when one becomes a stdio stream (fdopen): glibc's stdio
 * reads and writes through its internal calls, which need the blocking
 * mode. A pipe created before a fork is therefore served by RWF_NOWAIT
 * from then on. A pipe made without O_NONBLOCK starts private (never armed
 * in the backend, io/pipe.h); a dup of either end, an F_SETFL or FIONBIO
 * that sets O_NONBLOCK, and the give-backs above end that. F_SETPIPE_SZ
 * on a private pipe wakes its waiters to try again, as the kernel wakes
 * the writers of a pipe it grew.
 *
 * Cancellation points (intercept.h): open, openat, creat, close and
 * fcntl(F_SETLKW/F_OFD_SETLKW), on entry only (a cancelled call has not
 * opened, closed or locked anything). The offloaded waits (FIFO open,
 * F_SETLKW) are not interrupted by a cancel: the request waits for the
 * next point.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/fifo.h"
#include "io/io.h"
#include "io/ownfd.h"
#include "io/pipe.h"

/* ---- open ------------------------------------------------------------------- */

static int opened(int fd)
{
    if (fd >= 0)
        cap__fd_created(fd, CAP__FD_UNKNOWN, 0);
    return fd;
}

/* A FIFO a user thread opened in blocking mode: owned like a pipe the
 * runtime made (non-blocking underneath, the application's view kept
 * blocking, given back before a child process or fdopen; io/fd.h), so a
 * transfer is the plain call and EAGAIN parks. Otherwise a write longer
 * than the room poll promises would wait in the kernel, blocking the
 * worker (intercept/rw.c keeps PIPE_BUF pieces for the FIFOs it does not
 * own, which another writer can still race). A path that stopped being a
 * FIFO before the open is recorded as any open. */
static int opened_fifo(int fd)
{
    if (fd < 0 || !cap__fifo_is(fd))
        return opened(fd);
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    if (fl < 0 || syscall(SYS_fcntl, fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return opened(fd);
    /* A FIFO refuses RWF_NOWAIT both ways (preadv2/pwritev2 answer as
     * the kernel's: rw.c, positioned). */
    cap__fd_created(fd, CAP__FD_STREAM,
                    CAP__FDF_OWNED | CAP__FDF_NOWAIT_BAD_RD | CAP__FDF_NOWAIT_BAD_WR);
    return fd;
}

static bool needs_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* True if this open may wait in the kernel for another party: a FIFO
 * opened without O_NONBLOCK, by a user thread. */
static bool may_wait(int dirfd, const char *path, int flags)
{
    if ((flags & (O_NONBLOCK | O_PATH)) || (flags & O_TMPFILE) == O_TMPFILE ||
        (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) || !cap__ic_user())
        return false;
    struct stat st;
    int at = (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
    return syscall(SYS_newfstatat, dirfd, path, &st, at) == 0 && S_ISFIFO(st.st_mode);
}

struct open_call {
    int dirfd, flags;
    const char *path;
    mode_t mode;
    long result;
};

static void run_open(void *arg)
{
    struct open_call *c = arg;
    c->result = cap__ic_sys(syscall(SYS_openat, c->dirfd, c->path, c->flags, c->mode));
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode)
{
    cap__ic_enter();
    if (may_wait(dirfd, path, flags)) {
        struct open_call c = { .dirfd = dirfd, .flags = flags, .path = path, .mode = mode };
        cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
        /* Registered before cap__ic_ret_cancel, which may make a handed
         * jump (io/sigsafe.h). */
        return (int)cap__ic_ret_cancel(
            opened_fifo((int)cap__offload_call(run_open, &c, &c.result, &in)));
    }
    return opened((int)syscall(SYS_openat, dirfd, path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    mode_t mode = 0;
    if (needs_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return do_open(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    mode_t mode = 0;
    if (needs_mode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return do_open(AT_FDCWD, path, flags, mode);
}

int creat(const char *path, mode_t mode)
{
    return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));
int creat64(const char *path, mode_t mode) __attribute__((alias("creat")));

/* _FORTIFY_SOURCE variants (no mode argument). */
int __open_2(const char *path, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    return do_open(AT_FDCWD, path, flags, 0);
}
int __open64_2(const char *path, int flags) __attribute__((alias("__open_2")));
int __openat_2(int dirfd, const char *path, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    return do_open(dirfd, path, flags, 0);
}
int __openat64_2(int dirfd, const char *path, int flags) __attribute__((alias("__openat_2")));

/* ---- pipes -------------------------------------------------------------------- */

int pipe2(int fds[2], int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (cap__in_signal_handler()) { /* as asked, not ours (io/fd.h) */
        int rc = (int)syscall(SYS_pipe2, fds, flags);
        if (rc == 0) {
            uint32_t fl = (flags & O_NONBLOCK) ? CAP__FDF_APP_NONBLOCK : 0;
            cap__fd_created(fds[0], CAP__FD_STREAM, fl);
            cap__fd_created(fds[1], CAP__FD_STREAM, fl);
        }
        return rc;
    }
    int rc = (int)syscall(SYS_pipe2, fds, flags | O_NONBLOCK);
    if (rc == 0) {
        uint32_t fl = CAP__FDF_OWNED | ((flags & O_NONBLOCK) ? CAP__FDF_APP_NONBLOCK : 0);
        cap__fd_created(fds[0], CAP__FD_STREAM, fl);
        cap__fd_created(fds[1], CAP__FD_STREAM, fl);
        /* Private unless the application wants it non-blocking: it then
         * means to poll it (io/pipe.h). */
        cap__pipe_made(fds[0], fds[1], !(flags & O_NONBLOCK));
    }
    return rc;
}

int pipe(int fds[2])
{
    return pipe2(fds, 0);
}

/* An eventfd is owned like a pipe (non-blocking underneath, so a
 * transfer is the plain call and EAGAIN parks): the kernel takes
 * RWF_NOWAIT for its reads but not its writes, and a blocking write
 * waits whenever the counter would pass its maximum, which poll's
 * POLLOUT (room for one) does not rule out, so "readiness, then the
 * plain write" blocked the worker, for good when the reader was a thread
 * of that worker. Given back with the pipes (a child process, fdopen). */
int eventfd(unsigned int initval, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    uint32_t view = (flags & EFD_NONBLOCK) ? CAP__FDF_APP_NONBLOCK : 0;
    if (cap__in_signal_handler()) { /* as asked, not ours (io/fd.h) */
        int fd = (int)syscall(SYS_eventfd2, initval, flags);
        if (fd >= 0)
            cap__fd_created(fd, CAP__FD_STREAM, view);
        return fd;
    }
    int fd = (int)syscall(SYS_eventfd2, initval, flags | EFD_NONBLOCK);
    if (fd >= 0) /* its writes refuse RWF_NOWAIT (rw.c, positioned) */
        cap__fd_created(fd, CAP__FD_STREAM, CAP__FDF_OWNED | CAP__FDF_NOWAIT_BAD_WR | view);
    return fd;
}

/* ---- dup ------------------------------------------------------------------------ */

int dup(int fd)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int r = (int)syscall(SYS_dup, fd);
    if (r >= 0)
        cap__fd_dup_of(r, fd);
    return r;
}

/* An owned socket becoming someone's stdin/stdout/stderr. */
static void disown_for_stdio(int oldfd, int newfd)
{
    cap__fd *o = cap__fd_peek(oldfd);
    if (newfd > 2 || o == NULL || !cap__fd_has(o, CAP__FDF_OWNED))
        return;
    if (cap__fd_has(o, CAP__FDF_PIPE)) { /* a pipe: every dup of it too */
        cap__fd_disown_pipes();
        return;
    }
    cap__fd_disown_file(oldfd); /* a socket, FIFO or eventfd: its other dups too */
}

/* Whether the kernel would refuse newfd as out of range (EBADF). A
 * number at or above a soft RLIMIT_NOFILE lowered since it was opened is
 * still open: checked before its close begins, or the failed dup would
 * leave its record forgotten (an owned socket then reads as non-blocking).
 * Once oldfd is known to be open and this passes, Linux's dup2 and dup3
 * fail only while newfd is being opened (EBUSY) or when the table cannot
 * grow to reach it (ENOMEM): newfd was not open then. */
static bool dup_target_out_of_range(int newfd)
{
    return newfd < 0 || (rlim_t)newfd >= cap__ic_nofile_soft();
}

/* dup2's and dup3's call (dup3 with flags 0 is dup2 for oldfd != newfd),
 * after their checks: newfd's life ends, and the kernel's close of
 * whatever it held may wait for SO_LINGER's timeout, which on a user
 * thread is made as close() makes it (linger.c): parked, or on the pool.
 * Returns as the system call does (-1 and errno). */
static int dup_onto(int oldfd, int newfd, int flags)
{
    if (cap__in_signal_handler()) /* there, the dup's own queued life ends it */
        return (int)syscall(SYS_dup3, oldfd, newfd, flags);
    cap__fd *f = cap__ic_user() ? cap__fd_peek(newfd) : NULL;
    if (f != NULL && cap__fd_has(f, CAP__FDF_LINGER))
        cap__ic_linger_before_close(newfd, f);
    cap__fd_closing(newfd);
    long r;
    if (f == NULL || !cap__ic_dup_lingering(oldfd, newfd, flags, f, &r))
        return (int)syscall(SYS_dup3, oldfd, newfd, flags);
    return (int)cap__ic_ret(r);
}

int dup3(int oldfd, int newfd, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    /* The errors that leave newfd open, checked before we end its life. */
    if (oldfd == newfd || (flags & ~O_CLOEXEC))
        return (int)cap__ic_ret(-EINVAL);
    /* The runtime's own descriptors are as if out of range. */
    if (cap__ownfd_is(newfd) || dup_target_out_of_range(newfd))
        return (int)cap__ic_ret(-EBADF);
    if (syscall(SYS_fcntl, oldfd, F_GETFD) < 0)
        return -1; /* EBADF */
    int r = dup_onto(oldfd, newfd, flags);
    if (r >= 0) {
        disown_for_stdio(oldfd, newfd); /* first: newfd inherits the give-back */
        cap__fd_dup_of(newfd, oldfd);
    }
    cap__fd_closed(newfd); /* after a failure; after a dup, its life stands */
    return r;
}

int dup2(int oldfd, int newfd)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (oldfd == newfd) /* only checks that oldfd is open */
        return (int)syscall(SYS_fcntl, oldfd, F_GETFD) < 0 ? -1 : newfd;
    if (syscall(SYS_fcntl, oldfd, F_GETFD) < 0)
        return -1; /* EBADF */
    /* The runtime's own descriptors are as if out of range. */
    if (cap__ownfd_is(newfd) || dup_target_out_of_range(newfd))
        return (int)cap__ic_ret(-EBADF);
    int r = dup_onto(oldfd, newfd, 0);
    if (r >= 0) {
        disown_for_stdio(oldfd, newfd); /* first: newfd inherits the give-back */
        cap__fd_dup_of(newfd, oldfd);
    }
    cap__fd_closed(newfd); /* after a failure; after a dup, its life stands */
    return r;
}

/* ---- close ------------------------------------------------------------------------ */

int close(int fd)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    bool user = cap__ic_enter();
    if (cap__ownfd_is(fd))
        return (int)cap__ic_ret(-EBADF); /* the runtime's: not the application's to close */
    cap__fd *f = cap__fd_peek(fd);
    if (user && f != NULL && cap__fd_has(f, CAP__FDF_LINGER))
        cap__ic_linger_before_close(fd, f); /* SO_LINGER's wait, parked (linger.c) */
    cap__fd_closing(fd);
    int r;
    if (!user)
        r = CAP__REAL(close)(fd);
    else if (!cap__ic_close_lingering(fd, f, &r)) /* or the kernel's wait, on the pool */
        r = (int)syscall(SYS_close, fd);
    cap__fd_closed(fd);
    return r;
}

/* CLOSE_RANGE_UNSHARE gives the calling kernel thread a private copy of
 * the descriptor table: on a worker that would split the table under
 * every user thread it runs, so a user thread gets EINVAL; a thread we do
 * not run may, and its closes do not concern the shared table. */
int close_range(unsigned first, unsigned last, int flags)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (first > last)
        return (int)cap__ic_ret(-EINVAL);
    if (flags & CLOSE_RANGE_UNSHARE) {
        if (cap__ic_user())
            return (int)cap__ic_ret(-EINVAL);
        return (int)syscall(SYS_close_range, first, last, flags);
    }
    /* A call the kernel refuses as a whole (a flag it does not know:
     * EINVAL; ENOSYS before Linux 5.9) closes nothing, so it must end no
     * life (wake no waiter with EBADF, forget no record) of a descriptor
     * that stays open: asked first on a range that names none. */
    long refused = cap__ic_sys(syscall(SYS_close_range, ~0u, ~0u, flags));
    if (refused != 0)
        return (int)cap__ic_ret(refused);
    if (!(flags & CLOSE_RANGE_CLOEXEC) && cap__ic_user())
        cap__ic_linger_before_close_range(first, last); /* as close() would (linger.c) */
    /* Around the runtime's own descriptors (io/ownfd.h): close or mark
     * the gaps between them. */
    for (;;) {
        int own = cap__ownfd_next(first, last);
        unsigned end = own < 0 ? last : (unsigned)own - 1;
        if (own < 0 || (unsigned)own > first) {
            bool closes = !(flags & CLOSE_RANGE_CLOEXEC);
            if (closes)
                cap__fd_closing_range(first, end);
            long rc = cap__ic_sys(syscall(SYS_close_range, first, end, flags));
            if (closes)
                cap__fd_closed_range(first, end);
            if (rc != 0)
                return (int)cap__ic_ret(rc);
        }
        if (own < 0 || (unsigned)own == last)
            return 0;
        first = (unsigned)own + 1;
    }
}

void closefrom(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    if (close_range((unsigned)lowfd, ~0u, 0) == 0)
        return;
    for (int fd = lowfd; fd < CAP__FD_MAX; fd++) /* kernels before 5.9 */
        if (syscall(SYS_fcntl, fd, F_GETFD) >= 0)
            close(fd);
}

/* ---- flags ---------------------------------------------------------------------------- */

struct lock_call {
    int fd, cmd;
    void *arg;
    long result;
};

static void run_lock(void *arg)
{
    struct lock_call *c = arg;
    c->result = syscall(SYS_fcntl, c->fd, c->cmd, c->arg);
    if (c->result < 0)
        c->result = -errno;
}

int fcntl(int fd, int cmd, ...)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    cap__fd *f;
    long r;
    switch (cmd) {
    case F_GETFL:
        /* The kernel's flags and the record's view of the same life: a
         * close (or a new life) between the two bumps gen, and the next
         * look, after the close (io/fd.h), finds the number closed or the
         * record current. */
        f = cap__fd_peek(fd);
        for (;;) {
            if (f != NULL)
                cap__fd_wait_closed(f);
            uint32_t gen = f != NULL ? atomic_load(&f->gen) : 0;
            r = syscall(SYS_fcntl, fd, cmd);
            if (r < 0 || f == NULL)
                return (int)r;
            uint32_t fl = atomic_load(&f->flags);
            if (atomic_load(&f->gen) != gen)
                continue;
            if (fl & CAP__FDF_OWNED)
                r = (r & ~O_NONBLOCK) | ((fl & CAP__FDF_APP_NONBLOCK) ? O_NONBLOCK : 0);
            return (int)r;
        }
    case F_SETFL: {
        long fl = (long)arg;
        if (fl & O_NONBLOCK) /* the application will poll it: not private */
            cap__pipe_escape_fd(fd);
        f = cap__fd_get(fd);
        bool owned = f != NULL && cap__fd_has(f, CAP__FDF_OWNED);
        r = syscall(SYS_fcntl, fd, cmd, owned ? (fl | O_NONBLOCK) : fl);
        if (r == 0 && f != NULL) /* the file's flags: every dup sees them */
            cap__fd_set_view(fd, CAP__FDF_APP_NONBLOCK | CAP__FDF_DIRECT,
                             ((fl & O_NONBLOCK) ? CAP__FDF_APP_NONBLOCK : 0) |
                                 ((fl & O_DIRECT) ? CAP__FDF_DIRECT : 0));
        return (int)r;
    }
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        r = syscall(SYS_fcntl, fd, cmd, arg);
        if (r >= 0)
            cap__fd_dup_of((int)r, fd);
        return (int)r;
    case F_SETLKW:
    case F_OFD_SETLKW:
        if (cap__ic_enter()) { /* may wait for another process: off the worker */
            struct lock_call c = { fd, cmd, arg, 0 };
            cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
            return (int)cap__ic_ret_cancel(cap__offload_call(run_lock, &c, &c.result, &in));
        }
        return (int)syscall(SYS_fcntl, fd, cmd, arg);
    case F_SETPIPE_SZ:
        r = syscall(SYS_fcntl, fd, cmd, arg);
        if (r >= 0) /* may have made room: the kernel wakes the pipe's writers */
            cap__pipe_resized(fd);
        return (int)r;
    default:
        return (int)syscall(SYS_fcntl, fd, cmd, arg);
    }
}

int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (req != FIONBIO)
        return (int)syscall(SYS_ioctl, fd, req, arg);
    if (!cap__user_readable(arg, sizeof(int))) /* the kernel's EBADF or EFAULT */
        return (int)syscall(SYS_ioctl, fd, req, arg);
    cap__fd *f = cap__fd_get(fd);
    bool on = arg != NULL && *(int *)arg != 0;
    if (on)
        cap__pipe_escape_fd(fd);
    if (f != NULL && cap__fd_has(f, CAP__FDF_OWNED)) {
        if (syscall(SYS_fcntl, fd, F_GETFD) < 0)
            return -1; /* EBADF */
    } else {
        int rc = (int)syscall(SYS_ioctl, fd, req, arg);
        if (rc != 0 || f == NULL)
            return rc;
    }
    cap__fd_set_view(fd, CAP__FDF_APP_NONBLOCK, on ? CAP__FDF_APP_NONBLOCK : 0);
    return 0;
}

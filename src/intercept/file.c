/* SPDX-License-Identifier: MIT */
/*
 * File-only calls: fsync, fdatasync (through the disk backend) and
 * sendfile (parks on the output descriptor when it is a socket or pipe;
 * a file-to-file copy runs on the offload pool unless CAP_DISKIO is
 * blocking).
 *
 * fsync and fdatasync are cancellation points on entry (intercept.h); the
 * disk wait is not interrupted. sendfile is not one (POSIX does not name
 * it; glibc's is not either).
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "io/diskio.h"
#include "io/io.h"
#include "io/pipe.h"
#include "util/clock.h"

static int sync_call(int fd, bool datasync)
{
    cap__fd *f = cap__fd_get(fd);
    if (f != NULL && cap__fd_classify(f, fd) == CAP__FD_FILE)
        return (int)cap__ic_ret(cap__disk_fsync(fd, datasync));
    return (int)syscall(datasync ? SYS_fdatasync : SYS_fsync, fd);
}

int fsync(int fd)
{
    if (!cap__ic_enter())
        return CAP__REAL(fsync)(fd);
    return sync_call(fd, false);
}

int fdatasync(int fd)
{
    if (!cap__ic_enter())
        return CAP__REAL(fdatasync)(fd);
    return sync_call(fd, true);
}

struct sf {
    int in;
    off_t *off;
    size_t count;
    bool owned; /* out is non-blocking underneath: no readiness check needed */
    long result;
};

static ssize_t sf_attempt(int out, void *arg)
{
    struct sf *s = arg;
    if (!s->owned && cap__ic_revents_now(out, POLLOUT) == 0)
        return -EAGAIN;
    return cap__ic_sys(syscall(SYS_sendfile, out, s->in, s->off, s->count));
}

struct sf_file {
    int out;
    struct sf s;
};

static void sf_run_file(void *arg)
{
    struct sf_file *c = arg;
    c->s.result = cap__ic_sys(syscall(SYS_sendfile, c->out, c->s.in, c->s.off, c->s.count));
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
    cap__pipe_escape_fd(out); /* moves data the wrappers do not see (io/pipe.h) */
    if (!cap__ic_user())
        return CAP__REAL(sendfile)(out, in, off, count);
    cap__fd *f = cap__fd_get(out);
    int kind = f != NULL ? cap__fd_classify(f, out) : CAP__FD_UNKNOWN;
    if (kind == CAP__FD_SOCKET || kind == CAP__FD_STREAM) {
        struct sf s = { .in = in, .off = off, .count = count,
                        .owned = cap__fd_has(f, CAP__FDF_OWNED) };
        bool nonblock = cap__ic_nonblock(f);
        uint64_t deadline = kind == CAP__FD_SOCKET ? cap__io_deadline(f, CAP__IO_WRITE)
                                                   : CAP__FOREVER;
        size_t total = 0;
        for (;;) {
            ssize_t r = cap__io_do(f, out, CAP__IO_WRITE, sf_attempt, &s, deadline, nonblock,
                                   cap__ic_intr(deadline), 0);
            if (r <= 0 || nonblock) {
                if (total > 0)
                    return (ssize_t)total;
                return cap__ic_ret(r == -ETIMEDOUT ? -EAGAIN : r);
            }
            total += (size_t)r;
            s.count -= (size_t)r;
            if (s.count == 0)
                return (ssize_t)total;
        }
    }
    if (kind == CAP__FD_FILE && cap__diskio_active != &cap__diskio_blocking) {
        struct sf_file c = { .out = out, .s = { .in = in, .off = off, .count = count } };
        if (cap__offload(sf_run_file, &c) == 0)
            return cap__ic_ret(c.s.result);
    }
    return syscall(SYS_sendfile, out, in, off, count);
}

ssize_t sendfile64(int out, int in, off_t *off, size_t count) __attribute__((alias("sendfile")));

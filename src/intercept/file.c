/* SPDX-License-Identifier: MIT */
/*
 * File-only calls: fsync, fdatasync (through the disk backend) and
 * sendfile (parks on the output descriptor when it is a socket or pipe,
 * and, where the input file's range is not cached, for its device reads:
 * io/disk_warm.c;
 * a file-to-file copy runs on the offload pool unless CAP_DISKIO is
 * blocking); and the other calls that wait for the device, on the offload
 * pool unless CAP_DISKIO is blocking: msync with MS_SYNC, copy_file_range,
 * sync_file_range, fallocate, posix_fallocate, syncfs and sync.
 *
 * fsync, fdatasync, msync, copy_file_range, sync_file_range and
 * fallocate are cancellation points on entry (intercept.h; the last three
 * are not POSIX points, but glibc makes them points); the disk wait is not
 * interrupted.
 * sendfile, syncfs and sync are not points (nor in glibc).
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/ownedxfer.h"
#include "arch/syscall.h"
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
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(fsync)(fd);
    return sync_call(fd, false);
}

int fdatasync(int fd)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(fdatasync)(fd);
    return sync_call(fd, true);
}

struct device_call {
    long nr, a[6];
    long result;
    bool xfsz; /* the kernel raised SIGXFSZ on a pool thread (io.h, cap__offload_took) */
};

static void run_device_call(void *arg)
{
    struct device_call *c = arg;
    c->result = cap__ic_sys(syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]));
    if (c->result == -EFBIG) /* a copy into a file past RLIMIT_FSIZE */
        c->xfsz = cap__offload_took(SIGXFSZ);
}

/* fn(arg) where a device wait goes: on the pool from a user thread, here
 * otherwise (CAP_DISKIO=blocking, another thread, no pool thread). */
static void on_device_path(void (*fn)(void *), void *arg)
{
    if (!cap__ic_user() || cap__diskio_active == &cap__diskio_blocking ||
        cap__offload(fn, arg) != 0)
        fn(arg);
}

/* c made on the offload pool while only the calling user thread waits
 * (inline under CAP_DISKIO=blocking, from other threads, or with no pool
 * thread); nothing interrupts it, as nothing interrupts the kernel's wait
 * for the device. A SIGXFSZ the kernel raised on the pool thread is
 * raised in the caller, as the kernel's call would. The result as the
 * system call gives it: >= 0 or -errno. */
static long device_result(struct device_call *c)
{
    on_device_path(run_device_call, c); /* inline: a SIGXFSZ is this thread's already */
    if (c->xfsz)
        raise(SIGXFSZ); /* intercept/sigsend.c: to this user thread */
    return c->result;
}

/* device_result as libc gives it: -1 and errno on failure. */
static long device_call(struct device_call *c)
{
    return cap__ic_ret(device_result(c));
}

struct sf {
    cap__fd *out; /* the output's record */
    int in;
    off_t *off;
    size_t count;
    bool wait_all; /* a blocking socket: the kernel's call waits to send all */
};

static ssize_t sf_attempt(int out, void *arg)
{
    struct sf *s = arg;
    /* Owned (non-blocking underneath): the call, with no readiness check.
     * The ownership test and the call are one piece that a signal
     * interrupting it makes start over at the test (arch/ownedxfer.h): a
     * fork may give a pipe back, blocking, in between. */
    cap__fd_owned_call(s->out);
    long r = cap__arch_owned_xfer(out, s->in, (long)s->off, (long)s->count, &s->out->flags,
                                  CAP__FDF_OWNED, SYS_sendfile);
    if (r != CAP__ARCH_NOT_OWNED)
        return r;
    if (cap__ic_revents_now(out, POLLOUT) == 0)
        return -EAGAIN;
    /* A blocking socket not ours (inherited, received, made by a raw call,
     * given back): the kernel's sendfile returns only once it has sent
     * all it was given, and readiness promises room for some of it. So
     * no more than that room goes per call (intercept.h); the caller's
     * loop sends the rest, parked while the socket has no room. Before,
     * the whole count went at once, and a file larger than the room held
     * the worker until the peer had read nearly all of it. */
    size_t count = s->count;
    if (s->wait_all) {
        size_t room = cap__ic_send_room(out);
        if (count > room)
            count = room;
    }
    return cap__sys6(SYS_sendfile, out, s->in, (long)s->off, (long)count, 0, 0);
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
    cap__pipe_escape_fd(out); /* moves data the wrappers do not see (io/pipe.h) */
    if (!cap__ic_user())
        return CAP__REAL(sendfile)(out, in, off, count);
    cap__fd *f = cap__fd_get(out);
    int kind = f != NULL ? cap__fd_classify(f, out) : CAP__FD_UNKNOWN;
    if (kind == CAP__FD_SOCKET || kind == CAP__FD_STREAM) {
        bool nonblock = cap__ic_nonblock(f);
        struct sf s = { .out = f, .in = in, .off = off,
                        .wait_all = kind == CAP__FD_SOCKET && !nonblock };
        uint64_t deadline = kind == CAP__FD_SOCKET ? cap__io_deadline(f, CAP__IO_WRITE)
                                                   : CAP__FOREVER;
        cap__fd *fin = cap__fd_get(in);
        bool from_file = fin != NULL && cap__fd_classify(fin, in) == CAP__FD_FILE;
        size_t total = 0;
        for (;;) {
            /* A cold input is read through the disk backend first, not
             * by the kernel's transfer on the worker (io/disk_warm.c);
             * each transfer then moves no more than was looked at. */
            s.count = count - total;
            if (from_file)
                cap__disk_warm(in, off != NULL ? *off : -1, &s.count);
            ssize_t r = cap__io_do(f, out, CAP__IO_WRITE, sf_attempt, &s, deadline, nonblock,
                                   cap__ic_intr(deadline), 0);
            if (r > 0)
                total += (size_t)r;
            if (r > 0 && !nonblock && total < count)
                continue;
            if (total > 0)
                return (ssize_t)total;
            return cap__ic_ret(r == -ETIMEDOUT ? -EAGAIN : r);
        }
    }
    struct device_call c = { .nr = SYS_sendfile, .a = { out, in, (long)off, (long)count } };
    if (kind == CAP__FD_FILE) /* a file-to-file copy */
        return device_call(&c);
    return syscall(SYS_sendfile, out, in, off, count);
}

ssize_t sendfile64(int out, int in, off_t *off, size_t count) __attribute__((alias("sendfile")));

/* ---- the other waits for the device ---------------------------------------- */

int msync(void *addr, size_t len, int flags)
{
    if (!cap__ic_enter())
        return CAP__REAL(msync)(addr, len, flags);
    if (!(flags & MS_SYNC)) /* returns at once */
        return (int)syscall(SYS_msync, addr, len, flags);
    struct device_call c = { .nr = SYS_msync, .a = { (long)addr, (long)len, flags } };
    return (int)device_call(&c);
}

ssize_t copy_file_range(int in, off_t *off_in, int out, off_t *off_out, size_t len,
                        unsigned flags)
{
    cap__ic_enter(); /* a cancellation point on entry, as glibc's */
    struct device_call c = { .nr = SYS_copy_file_range,
                             .a = { in, (long)off_in, out, (long)off_out, (long)len, flags } };
    return device_call(&c);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags)
{
    cap__ic_enter(); /* a cancellation point on entry, as glibc's */
    struct device_call c = { .nr = SYS_sync_file_range,
                             .a = { fd, (long)off, (long)n, flags } };
    return (int)device_call(&c);
}

/* Allocating blocks may wait for the device (journal, block allocation);
 * glibc's is a cancellation point (SYSCALL_CANCEL). It was not intercepted:
 * a pending cancel did not act, and the call held the worker. */
int fallocate(int fd, int mode, off_t off, off_t len)
{
    cap__ic_enter(); /* a cancellation point on entry, as glibc's */
    struct device_call c = { .nr = SYS_fallocate, .a = { fd, mode, (long)off, (long)len } };
    return (int)device_call(&c);
}

int fallocate64(int fd, int mode, off_t off, off_t len) __attribute__((alias("fallocate")));

struct emulated_fallocate {
    int fd;
    off_t off, len;
    int ret;
};

static void run_emulated_fallocate(void *arg)
{
    struct emulated_fallocate *c = arg;
    c->ret = CAP__REAL(posix_fallocate)(c->fd, c->off, c->len);
}

/* glibc's makes the fallocate system call with its internal call, and
 * where the file system refuses it (EOPNOTSUPP) writes to every block
 * itself; both held the worker. The system call goes where fallocate's
 * goes, and glibc's emulation to the pool likewise. The error is
 * returned, errno untouched; not a cancellation point, as glibc's is
 * not. */
int posix_fallocate(int fd, off_t off, off_t len)
{
    if (!cap__ic_user())
        return CAP__REAL(posix_fallocate)(fd, off, len);
    struct device_call c = { .nr = SYS_fallocate, .a = { fd, 0, (long)off, (long)len } };
    long r = device_result(&c);
    if (r != -EOPNOTSUPP)
        return r < 0 ? (int)-r : 0;
    struct emulated_fallocate e = { .fd = fd, .off = off, .len = len };
    on_device_path(run_emulated_fallocate, &e);
    return e.ret;
}

int posix_fallocate64(int fd, off_t off, off_t len) __attribute__((alias("posix_fallocate")));

int syncfs(int fd)
{
    struct device_call c = { .nr = SYS_syncfs, .a = { fd } };
    return (int)device_call(&c);
}

void sync(void)
{
    struct device_call c = { .nr = SYS_sync };
    device_call(&c);
}

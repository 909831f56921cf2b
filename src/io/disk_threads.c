/* SPDX-License-Identifier: MIT */
/*
 * CAP_DISKIO=threads: the paper's fallback. The blocking call runs on a
 * kernel thread of the offload pool (io/offload.c) while only the calling
 * user thread waits. Concurrency at the disk is bounded by the pool size.
 *
 * A write that starts at or past the file size limit (RLIMIT_FSIZE) fails
 * with EFBIG, and the kernel raises SIGXFSZ in the thread that made it:
 * on the pool, a kernel thread that blocks every signal, where it would
 * stay pending for good. The pool thread takes it and the calling user
 * thread raises it to itself, as the kernel would have (see run_rw).
 */
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/diskio.h"

struct rw_call {
    enum cap__disk_op op;
    int fd, cnt, rwf;
    const struct iovec *iov;
    off_t off;
    ssize_t result;
    bool xfsz; /* the kernel raised SIGXFSZ on the pool thread: the caller raises it */
};

static void run_rw(void *arg)
{
    struct rw_call *c = arg;
    c->result = cap__disk_blocking_rw(c->op, c->fd, c->iov, c->cnt, c->off, c->rwf);
    if (c->op == CAP__DISK_WRITE && c->result == -EFBIG)
        c->xfsz = cap__offload_took(SIGXFSZ);
}

static ssize_t threads_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                          off_t off, int rwf)
{
    struct rw_call c = { .op = op, .fd = fd, .cnt = cnt, .rwf = rwf, .iov = iov, .off = off };
    if (cap__offload(run_rw, &c) != 0)
        run_rw(&c); /* no pool thread: block rather than fail */
    if (c.xfsz)
        raise(SIGXFSZ); /* intercept/sigsend.c: to the calling user thread */
    return c.result;
}

struct sync_call {
    int fd;
    bool datasync;
    int result;
};

static void run_sync(void *arg)
{
    struct sync_call *c = arg;
    c->result = syscall(c->datasync ? SYS_fdatasync : SYS_fsync, c->fd) == 0 ? 0 : -errno;
}

static int threads_fsync(int fd, bool datasync)
{
    struct sync_call c = { .fd = fd, .datasync = datasync };
    if (cap__offload(run_sync, &c) != 0)
        run_sync(&c);
    return c.result;
}

static int threads_start(void)
{
    return 0;
}

const cap__diskio cap__diskio_threads = {
    .name = "threads",
    .start = threads_start,
    .rw = threads_rw,
    .fsync = threads_fsync,
    .flush = NULL,
};

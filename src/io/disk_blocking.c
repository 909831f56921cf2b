/* SPDX-License-Identifier: MIT */
/*
 * CAP_DISKIO=blocking: the call goes straight to the kernel and blocks
 * the worker's kernel thread (and every user thread queued on it) until
 * the disk answers. For comparison only: it is what a user-level thread
 * package without asynchronous disk I/O would do.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/diskio.h"

static int blocking_start(void)
{
    return 0;
}

static int blocking_fsync(int fd, bool datasync)
{
    return syscall(datasync ? SYS_fdatasync : SYS_fsync, fd) == 0 ? 0 : -errno;
}

const cap__diskio cap__diskio_blocking = {
    .name = "blocking",
    .start = blocking_start,
    .rw = cap__disk_blocking_rw,
    .fsync = blocking_fsync,
    .flush = NULL,
};

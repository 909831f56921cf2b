/* SPDX-License-Identifier: MIT */
/*
 * The writer-less FIFO check (fifo.h). The private pipe is made on first
 * use, non-blocking at both ends and out of the application's way
 * (ownfd.h); concurrent checks share it: each copies at most a byte and
 * drains whatever is there, so it never fills.
 */
#include "io/fifo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/ownfd.h"

static atomic_long probe = -1; /* read end << 32 | write end, once made */

static long probe_pipe(void)
{
    long p = atomic_load_explicit(&probe, memory_order_acquire);
    if (p != -1)
        return p;
    int fds[2];
    if (syscall(SYS_pipe2, fds, O_NONBLOCK | O_CLOEXEC) != 0)
        return -1;
    fds[0] = cap__ownfd_move_high(fds[0]);
    fds[1] = cap__ownfd_move_high(fds[1]);
    long mine = (long)fds[0] << 32 | (long)(unsigned)fds[1];
    long none = -1;
    if (!atomic_compare_exchange_strong(&probe, &none, mine)) {
        syscall(SYS_close, fds[0]); /* another check made one first */
        syscall(SYS_close, fds[1]);
        return none;
    }
    cap__ownfd_add(fds[0]);
    cap__ownfd_add(fds[1]);
    return mine;
}

bool cap__fifo_answers_now(cap__fd *f, int fd)
{
    if (cap__fd_has(f, CAP__FDF_NOT_PIPE))
        return false;
    long p = probe_pipe();
    if (p == -1)
        return false;
    int rd = (int)(p >> 32), wr = (int)(p & 0xffffffff);
    long r = syscall(SYS_tee, fd, wr, 1L, (long)SPLICE_F_NONBLOCK);
    if (r < 0) {
        if (errno == EINVAL) /* not a pipe: never again */
            cap__fd_set(f, CAP__FDF_NOT_PIPE);
        return false;
    }
    if (r > 0) { /* data since the poll: drain the copy */
        char buf[64];
        while (syscall(SYS_read, rd, buf, sizeof buf) > 0) {
        }
    }
    return true;
}

bool cap__fifo_is(int fd)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

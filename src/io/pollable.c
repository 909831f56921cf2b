/* SPDX-License-Identifier: MIT */
/*
 * Whether a descriptor can be waited on, for the backends whose own
 * registration cannot tell (uring, poll). A file without a poll wait
 * queue (a regular file, /dev/null, most of /proc and /sys) says it is
 * ready at once, every time it is asked: io_uring ends such a file's
 * multishot poll at once, as a full completion queue would, and the
 * re-arm that follows ends again (the worker spun in its harvest for as
 * long as the file stayed open); poll(2) returns at once (a waiter for an
 * event the file never reports woke and parked again for its whole
 * timeout). epoll refuses such a file with EPERM, as the epoll backend's
 * own registration shows; so an add to a scratch epoll instance, taken
 * out again at once, answers for the others.
 *
 * State: one epoll instance, made by cap__netio_probe_start (a backend's
 * start), one of the runtime's own descriptors (io/ownfd.h), closed only
 * in a fork's child (cap__netio_probe_forget).
 * Callers hold the descriptor's record lock, so one number is never
 * probed twice at once; two numbers of one file are two entries.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/netio.h"
#include "io/ownfd.h"

static int probe_fd = -1;

int cap__netio_probe_start(void)
{
    if (probe_fd >= 0)
        return 0;
    probe_fd = cap__ownfd_adopt((int)syscall(SYS_epoll_create1, EPOLL_CLOEXEC));
    return probe_fd < 0 ? -errno : 0;
}

void cap__netio_probe_forget(void)
{
    cap__ownfd_close(probe_fd);
    probe_fd = -1;
}

bool cap__netio_pollable(const cap__fd *f, int fd)
{
    /* Sockets, and the pipes and eventfds the runtime made, always are. */
    if (atomic_load(&f->kind) == CAP__FD_SOCKET || cap__fd_has(f, CAP__FDF_OWNED))
        return true;
    struct epoll_event ev = { .events = EPOLLIN };
    if (syscall(SYS_epoll_ctl, probe_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return errno != EPERM; /* EEXIST, ENOMEM...: the backend finds out */
    syscall(SYS_epoll_ctl, probe_fd, EPOLL_CTL_DEL, fd, &ev);
    return true;
}

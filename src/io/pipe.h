/* SPDX-License-Identifier: MIT */
/*
 * Pipes the runtime made (pipe, pipe2): the two ends know each other, and
 * while the pipe is private they are never armed in the netio backend.
 *
 * Why: since Linux 5.16 every write to a pipe that was ever polled
 * (poll, epoll, an io_uring poll: `pipe->poll_usage`, never cleared)
 * wakes its read queue, not only the empty-to-non-empty ones, and in an
 * epoll set each such write also takes the instance's lock, shared by
 * every CPU: a 12-byte write+read costs 743 ns on a pipe never polled
 * and 853-894 ns on one in an epoll set (docs/benchmarks.md, "I/O
 * findings"). A thread blocked in read on NPTL never polls.
 *
 * Private (CAP__FDF_LOCAL on both ends): both ends are owned
 * (non-blocking underneath), neither was ever duplicated, handed to
 * anything outside the wrappers, or polled. Every transfer then goes
 * through the wrappers of this process, so they can be the only
 * witnesses: a thread that finds the pipe empty (full) parks on its end
 * without arming it, and a read (write) through the wrappers wakes it:
 *  - the parker links itself under the end's lock only if the end's seq
 *    still equals its pre-attempt snapshot (io/wait.c), then, with the
 *    link in place, issues a full fence and checks seq once more;
 *  - the transfer on the other end, after its system call, bumps that
 *    seq with a locked add and then looks for waiters (wakes them under
 *    the lock if there are any). Dekker: either the parker's second look
 *    sees the bump (it tries again) or the waker sees the link.
 *  - an end on which no thread ever parked is not bumped at all: a
 *    parker first sets CAP__FDF_WAITED on its end (locked) and tries once
 *    more before it may park; the transfer on the other end fences after
 *    its system call before it reads that flag. Either the transfer sees
 *    the flag, or the parker's extra attempt comes after the transfer.
 *  - seq of a pipe end (CAP__FDF_PIPE, for its whole life) is only ever
 *    bumped with a locked add, so these lock-free bumps never race a
 *    plain store (io/wait.c, cap__io_ready).
 *
 * Falling back (cap__pipe_escape): the moment anything could make the
 * kernel the only witness of a transfer — a dup of either end (dup, dup2,
 * dup3, F_DUPFD), a give-back (fork, posix_spawn, fdopen, dup2 onto 0-2:
 * cap__fd_disown), the application's own poll/select on it (anything
 * that arms it), SCM_RIGHTS, the application setting O_NONBLOCK, splice,
 * tee, vmsplice, sendfile into it — both ends stop being private for the
 * rest of their lives: the flag is cleared, then under each end's lock
 * both seqs are bumped and every waiter is woken to try again. A woken
 * thread, or one that was between its attempt and its park, then finds
 * the pipe not private and parks the armed way (arming reports current
 * readiness with every backend: epoll ADD, the uring poll's first check,
 * the poll backend's level-triggered ppoll), so a transfer the kernel
 * alone saw is never missed. A close of one end (or dup2 onto it) falls
 * the other end back the same way before the close: its waiters retry,
 * park armed, and the kernel's hang-up (EOF, EPIPE) wakes them.
 *
 * Blind spots (besides those of io/fd.h): a raw read/write system call,
 * an io_uring of the application, or an open of /proc/self/fd/N on a
 * private pipe is no witness the runtime sees, so a thread parked on the
 * other end is not woken by it.
 */
#ifndef CAP_IO_PIPE_H
#define CAP_IO_PIPE_H

#include <stdbool.h>

#include "io/fd.h"
#include "util/sigctx.h"

/* A pipe the runtime just made (both records created): links the ends;
 * private unless the application asked for O_NONBLOCK. */
void cap__pipe_made(int rfd, int wfd, bool private_);

/* After a transfer of r > 0 bytes on an owned pipe end f (write: f is
 * a write end): wakes the other end's waiters as io/pipe.c explains. */
void cap__pipe_poke_slow(cap__fd *f, bool write);

static inline void cap__pipe_after_xfer(cap__fd *f, bool write)
{
    if (atomic_load_explicit(&f->peer, memory_order_relaxed) == 0)
        return;
    if (!write && !cap__fd_has(f, CAP__FDF_LOCAL))
        return; /* a read of a pipe in the backend: the kernel tells writers */
    cap__pipe_poke_slow(f, write);
}

/* After a transfer on fd by code that does not run user threads (a
 * thread we do not run): the same, if fd is a pipe end. Inside a signal
 * handler (util/sigctx.h), whose interrupted code may hold the other
 * end's lock, the wake-up is only queued (async-signal-safe): the signal
 * dispatch after the handler runs it, cap__pipe_run_deferred. */
void cap__pipe_after_foreign_xfer(int fd, bool write);
void cap__pipe_run_deferred(void);

/* After a successful F_SETPIPE_SZ on fd: if fd is an end of a private
 * pipe, every thread parked on either end tries again (the kernel wakes a
 * pipe's writers when it resizes it: growing a full pipe makes room that
 * no transfer through the wrappers announces). The pipe stays private. */
void cap__pipe_resized(int fd);

/* Ends privacy of the pipe f belongs to (see the top); no-op if it is
 * not private. closing: f is about to be closed, so only the other end's
 * waiters are woken (end_life wakes f's own with EBADF). Inside a signal
 * handler the flags change at once (a fork or exec made there needs
 * them) and the waiters try again at the dispatch after it. */
void cap__pipe_escape(cap__fd *f, bool closing);

/* cap__pipe_escape by number; inside a signal handler, queued for the
 * dispatch after it (io/fd.h). */
static inline void cap__pipe_escape_fd(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_LOCAL))
        return;
    if (cap__in_signal_handler())
        cap__fd_defer(CAP__FDD_ESCAPE, fd, 0, 0, NULL);
    else
        cap__pipe_escape(f, false);
}

#endif /* CAP_IO_PIPE_H */

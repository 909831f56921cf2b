/* SPDX-License-Identifier: MIT */
/*
 * The plain call on a descriptor the runtime owns: a pipe's or
 * eventfd's read or write (intercept/rw.c), a signalfd's read
 * (intercept/sigwait.c), a sendfile into a pipe or socket
 * (intercept/file.c), an accept or connect (intercept/net.c). Made so
 * that a signal handler cannot slip a give-back between the ownership
 * test and the system call, and so that each try looks at ownership
 * again.
 *
 * An owned pipe is non-blocking underneath, so its plain call never
 * waits. A fork or an exec gives it back its blocking mode
 * (io/fd.c, cap__fd_disown); if that happens between the test and the
 * call, the call blocks its worker's kernel thread until the pipe is
 * ready. A fork made by a signal handler lands exactly there when the
 * handler interrupted that code, and a fork on another worker can. So
 * the test and the call are one piece of assembly whose range is known,
 * rseq-style: every signal the runtime catches (stack/signal.c, the
 * trampoline) moves a context interrupted between the test and the
 * system call instruction (also one the kernel rewound there to restart
 * the call it interrupted) back to the test, which is made again as the
 * handler returns. The inputs stay in registers the system call does not
 * touch until then. A give-back of a pipe, FIFO, eventfd or signalfd
 * kicks the other workers once it is done (cap__fd_disown's walks), so a
 * call of theirs caught in the window, or already blocked in it, starts
 * over too; the handler that forked rewinds the call it interrupted
 * itself. A socket's give-back (fdopen, SCM_RIGHTS, dup2 onto 0-2: the
 * program's own calls, never a fork) kicks them only for a socket that
 * accept, connect or sendfile has made owned calls on (io/fd.h,
 * cap__fd_owned_call; since session 65): the others, most sockets, do
 * not cost each such call a signal per worker.
 *
 * One implementation per architecture: src/arch/<cpu>/owned_xfer.S and
 * owned_xfer.c.
 */
#ifndef CAP_ARCH_OWNEDXFER_H
#define CAP_ARCH_OWNEDXFER_H

#include <stdatomic.h>
#include <stdint.h>

/* What cap__arch_owned_xfer returns when (*flags & bit) is 0: not a value
 * any system call returns (errors are -4095..-1). */
#define CAP__ARCH_NOT_OWNED (-4096L)

/* System call nr(a, b, c, d) if (*flags & bit) != 0 as it is made, else
 * CAP__ARCH_NOT_OWNED; a raw result (-errno on failure). */
long cap__arch_owned_xfer(long a, long b, long c, long d, const _Atomic uint32_t *flags,
                          uint32_t bit, long nr);

/* From a signal handler with its ucontext: a context interrupted inside
 * cap__arch_owned_xfer before or at its system call goes back to the
 * test. */
void cap__arch_owned_xfer_rewind(void *uctx);

#endif /* CAP_ARCH_OWNEDXFER_H */

/* SPDX-License-Identifier: MIT */
/*
 * One try of a kernel call that has no flag to make it not wait, on a
 * descriptor whose blocking mode the runtime may not change: an accept
 * on a blocking listener the runtime does not own (inherited, socket
 * activation with Accept=no, a prefork server's, one given back).
 *
 * Readiness first and the kernel's call after was not enough there: a
 * thread of another worker, or another process sharing the listener,
 * may take the connection between the two, and the accept then waits in
 * the kernel, holding the worker, until the next connection. The call
 * made on the offload pool closes that window but costs a round trip
 * per connection (0.74x the connections per second, session 64).
 *
 * So the call is made as an io_uring operation with the flag the system
 * call lacks (IORING_ACCEPT_DONTWAIT, Linux 6.10), on a small ring of
 * the calling worker's own, submitted and completed inside one
 * io_uring_enter: nothing queued gives EAGAIN at once, whatever the
 * listener's mode. nowait_ring.c has the rings and their rules.
 */
#ifndef CAP_IO_NOWAIT_RING_H
#define CAP_IO_NOWAIT_RING_H

#include <sys/socket.h>

/* What cap__nowait_accept returns when it cannot make the call here (no
 * io_uring for this process, a kernel without the flag, no memory or
 * descriptor for the ring): the caller falls back to readiness then the
 * kernel's call. Not a value accept4 returns (errors are -4095..-1). */
#define CAP__NOWAIT_UNAVAILABLE (-4096L)

/* accept4(fd, addr, alen, flags) on a user thread's worker, never
 * waiting: the new descriptor, -EAGAIN when no connection is queued,
 * another -errno as accept4's, or CAP__NOWAIT_UNAVAILABLE. */
long cap__nowait_accept(int fd, struct sockaddr *addr, socklen_t *alen, int flags);

/* In a fork's child (io/start.c, cap__io_forked): the parent's rings let
 * go of in the child only. */
void cap__nowait_forked(void);

#endif /* CAP_IO_NOWAIT_RING_H */

/* SPDX-License-Identifier: MIT */
/*
 * The descriptors the runtime opens for itself (the epoll instance, kick
 * and signal eventfds, io_uring rings and their eventfds). An application
 * that closes "everything above stderr" (closefrom(3), close_range, or a
 * loop of close() calls, as daemons do) must not take them away: the
 * interceptors of src/intercept/fd.c skip them, and a close() of one of
 * them fails with EBADF as if it were not open.
 *
 * They live at high numbers (cap__ownfd_adopt), and a dup2()/dup3() onto
 * one fails with EBADF, as for a number out of range.
 *
 * Registration happens once per descriptor, at start-up or when a worker
 * first needs a ring; lookups are lock-free reads of a small array.
 */
#ifndef CAP_IO_OWNFD_H
#define CAP_IO_OWNFD_H

#include <stdbool.h>

/* Takes a descriptor the runtime has just opened for itself out of the
 * application's way: moves it to the lowest free number at or above
 * ownfd.c's high base (close-on-exec; the original number is closed), so
 * the small numbers a program may expect to get from open() or to pick for
 * dup2() stay free. Returns the descriptor to use from now on: the new
 * number, or fd itself if no high number is free. A negative fd is
 * returned unchanged. Call it before the descriptor is registered anywhere
 * (an epoll set, a ring). */
int cap__ownfd_move_high(int fd);
struct io_uring;
/* The same for an io_uring instance's descriptor, updating the ring. */
void cap__ownfd_move_ring_high(struct io_uring *ring);
/* Records fd as the runtime's own, for good: call it once the descriptor
 * is sure to stay open. Past MAX_OWN (ownfd.c) it stays unprotected. */
void cap__ownfd_add(int fd);
/* fd, recorded by cap__ownfd_add, is about to be closed: no longer ours.
 * Its slot is reused by the next add. */
void cap__ownfd_remove(int fd);
/* In a fork's child, first: the table's lock, which a lost thread may have
 * held, is free again. */
void cap__ownfd_forked(void);
/* In a fork's child: closes fd, one of the parent's instances that the
 * child inherited (io/start.c, cap__io_forked), in the child only: no
 * longer ours, and its record's life (io/fd.h) ended. Raw system call. */
void cap__ownfd_close(int fd);
/* cap__ownfd_close for a ring: unmapped and closed in the child only. */
void cap__ownfd_close_ring(struct io_uring *ring);
/* Both: moves fd high and records it. */
int cap__ownfd_adopt(int fd);
/* Whether fd is one of the runtime's own. */
bool cap__ownfd_is(int fd);
/* The lowest own descriptor in [first, last], or -1. */
int cap__ownfd_next(unsigned first, unsigned last);

#endif /* CAP_IO_OWNFD_H */

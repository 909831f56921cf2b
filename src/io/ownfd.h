/* SPDX-License-Identifier: MIT */
/*
 * The descriptors the runtime opens for itself (the epoll instance, kick
 * and signal eventfds, io_uring rings and their eventfds). An application
 * that closes "everything above stderr" (closefrom(3), close_range, or a
 * loop of close() calls, as daemons do) must not take them away: the
 * interceptors of src/intercept/fd.c skip them, and a close() of one of
 * them fails with EBADF as if it were not open.
 *
 * Registration happens once per descriptor, at start-up or when a worker
 * first needs a ring; lookups are lock-free reads of a small array.
 */
#ifndef CAP_IO_OWNFD_H
#define CAP_IO_OWNFD_H

#include <stdbool.h>

/* Records fd as the runtime's own. Returns 0, or -ENOSPC past the limit
 * (the descriptor then stays unprotected, as before this existed). */
int cap__ownfd_add(int fd);
/* Whether fd is one of the runtime's own. */
bool cap__ownfd_is(int fd);
/* The lowest own descriptor in [first, last], or -1. */
int cap__ownfd_next(unsigned first, unsigned last);

#endif /* CAP_IO_OWNFD_H */

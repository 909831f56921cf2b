/* SPDX-License-Identifier: MIT */
/*
 * Pipes and FIFOs the runtime does not own (it owns the pipes it made and
 * the FIFOs a user thread opened in blocking mode: intercept/fd.c), read
 * with "readiness, then the plain call" (intercept/rw.c): the kernel
 * refuses RWF_NOWAIT on them, and their mode is the application's, never
 * flipped.
 *
 * Readiness alone cannot tell one case apart: a FIFO that never had a
 * writer. Linux's read of it returns 0 at once (no writer: end of file),
 * but poll reports nothing (no POLLHUP until a writer came and went), so
 * the reader would park until some writer appears. cap__fifo_answers_now
 * asks the pipe itself without taking anything from it: tee(2) of one byte
 * into a private pipe, non-blocking, returns 0 when the pipe is empty and
 * has no writer, copies a byte when data has arrived since the poll (the
 * copy is drained) and fails with EAGAIN when a writer may still write.
 */
#ifndef CAP_IO_FIFO_H
#define CAP_IO_FIFO_H

#include <stdbool.h>

#include "io/fd.h"

/* Whether a read of fd, a pipe or FIFO that poll found not readable, would
 * not block after all (empty with no writer, or data since). Other kinds
 * (ttys, eventfds, devices) answer false and are marked so that they are
 * not asked again (CAP__FDF_NOT_PIPE). */
bool cap__fifo_answers_now(cap__fd *f, int fd);

/* Whether fd is a pipe or a FIFO (one fstat; false if it is not open). */
bool cap__fifo_is(int fd);

#endif /* CAP_IO_FIFO_H */

/* SPDX-License-Identifier: MIT */
/* Whether this kernel makes an io_uring accept that does not wait
 * (IORING_ACCEPT_DONTWAIT, Linux 6.10), asked of it through liburing as
 * the runtime asks (src/io/nowait_ring.h): where it cannot, the runtime
 * falls back to readiness then the kernel's accept, whose lost race the
 * tests that include this are about. Link with liburing. */
#ifndef CAP_TESTS_IO_NOWAIT_ACCEPT_PROBE_H
#define CAP_TESTS_IO_NOWAIT_ACCEPT_PROBE_H

#include <errno.h>
#include <liburing.h>
#include <stdbool.h>

#ifndef IORING_ACCEPT_DONTWAIT
#define IORING_ACCEPT_DONTWAIT (1U << 1)
#endif

/* listener: a blocking one with nothing queued, where such an accept
 * fails with EAGAIN inside the submission (a kernel that does not know
 * the flag refuses it: EINVAL). */
static inline bool kernel_accepts_without_waiting(int listener)
{
    struct io_uring ring;
    if (io_uring_queue_init(2, &ring, 0) != 0)
        return false;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_accept(sqe, listener, NULL, NULL, 0);
    sqe->ioprio = IORING_ACCEPT_DONTWAIT;
    struct io_uring_cqe *cqe;
    bool ok = io_uring_submit(&ring) == 1 && io_uring_peek_cqe(&ring, &cqe) == 0 &&
              cqe->res == -EAGAIN;
    io_uring_queue_exit(&ring);
    return ok;
}

#endif /* CAP_TESTS_IO_NOWAIT_ACCEPT_PROBE_H */

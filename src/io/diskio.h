/* SPDX-License-Identifier: MIT */
/*
 * The disk backend contract (CAP_DISKIO). One backend is chosen at
 * start-up (io/start.c); each is one file: disk_uring.c (default: a ring
 * per worker, submissions batched), disk_threads.c (a pool of kernel
 * threads doing the blocking call: the paper's fallback), disk_blocking.c
 * (straight through, blocking the worker: for comparison).
 *
 * disk.c sits in front of every backend: page-cache hits are served by
 * one preadv2(RWF_NOWAIT) and never reach the backend (the paper's
 * Figure 4 fix), and short transfers are completed as a blocking call
 * would.
 *
 *  - start(): 0 or -errno.
 *  - forget(): in a fork's child (io/start.c): the parent's instances,
 *    which the child inherited and shares with it (rings), let go of in
 *    the child only, as netio.h's forget(); the child makes its own on
 *    first use. May be NULL.
 *  - rw(op, fd, iov, cnt, off, rwf): one transfer (it may be short);
 *    off -1 means the file position. Only the calling user thread waits.
 *    >= 0 or -errno.
 *  - fsync(fd, datasync): 0 or -errno.
 *  - flush(w): submit what w batched; called before w sleeps. May be NULL.
 *  - spin(w): on each round of w's idle spin, no system call: reap what
 *    completed on w's own queue; true if it did. It may silence w's
 *    completion notifications for the rest of the spin. May be NULL.
 *  - spin_end(w): the spin is over (work found, or w goes to sleep):
 *    notifications back on, then reap what completed while they were
 *    off; true if it did. May be NULL (then spin silences nothing).
 *  - spin_awaits(w): true while w has requests of its own in flight
 *    whose completions spin(w) would see: a spin then waits for them,
 *    not only for hand-offs from other workers. May be NULL (never).
 *  - wait_prepare(w, inst_fd), wait(w, deadline), wake(w): sleeping in
 *    the backend (io/idle.c has the protocol). wait_prepare: true if w has
 *    requests of its own in flight and is now set up to wait for them, for
 *    wake(w), and for inst_fd (>= 0: the netio instance w holds) to poll
 *    readable; wait (always called after a successful prepare): if
 *    block, sleep until one of these or the deadline; then reap and
 *    return whether inst_fd fired; wake: end w's wait (any thread).
 *    NULL, NULL, NULL where the backend cannot.
 */
#ifndef CAP_IO_DISKIO_H
#define CAP_IO_DISKIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "io/io.h"

struct cap__worker;

typedef struct cap__diskio {
    const char *name;
    int (*start)(void);
    void (*forget)(void);
    ssize_t (*rw)(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt, off_t off,
                  int rwf);
    int (*fsync)(int fd, bool datasync);
    void (*flush)(struct cap__worker *w);
    bool (*spin)(struct cap__worker *w);
    bool (*spin_end)(struct cap__worker *w);
    bool (*spin_awaits)(struct cap__worker *w);
    bool (*wait_prepare)(struct cap__worker *w, int inst_fd);
    bool (*wait)(struct cap__worker *w, uint64_t deadline, bool block);
    void (*wake)(struct cap__worker *w);
} cap__diskio;

/* The plain blocking system call (preadv2 / pwritev2): -errno on error.
 * Shared by the backends. */
ssize_t cap__disk_blocking_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                              off_t off, int rwf);

extern __attribute__((visibility("hidden"))) const cap__diskio cap__diskio_uring;
extern __attribute__((visibility("hidden"))) const cap__diskio cap__diskio_threads;
extern __attribute__((visibility("hidden"))) const cap__diskio cap__diskio_blocking;
extern __attribute__((visibility("hidden"))) const cap__diskio *cap__diskio_active;

/* CAP_FILE_WRITES (start.c): where a buffered write to a local file that
 * refuses RWF_NOWAIT is made (disk.c, "Buffered writes"). */
enum cap__file_writes {
    CAP__FILE_WRITES_AUTO,    /* on the worker until one proves slow */
    CAP__FILE_WRITES_WORKER,  /* always on the worker */
    CAP__FILE_WRITES_BACKEND, /* always through the backend (the ring or pool) */
};
extern __attribute__((visibility("hidden"))) enum cap__file_writes cap__file_writes;

#endif /* CAP_IO_DISKIO_H */

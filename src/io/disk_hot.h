/* SPDX-License-Identifier: MIT */
/*
 * The cached-read fast path of pread() (disk.c, "Hot files"), inline in
 * the wrapper: a read of a hot file between probes is one descriptor
 * lookup, the raw pread64 and the yield count. Inline because after a
 * system call the return stack no longer predicts the calls that were
 * open across it: each return taken after the syscall instruction
 * mispredicts. Through an out-of-line fast path and libc's syscall() a
 * cached read took three such returns (to the fast path, to pread, to
 * the application), NPTL's pread one; here it takes one too. The probe
 * turn and the yield are out of line (once in PROBE_EVERY and
 * HITS_PER_YIELD reads).
 */
#ifndef CAP_IO_DISK_HOT_H
#define CAP_IO_DISK_HOT_H

#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "arch/syscall.h"
#include "io/fd.h"
#include "io/io.h"

/* Every PROBE_EVERY-th read of a hot file on a kernel thread is a
 * RWF_NOWAIT probe; every HITS_PER_YIELD-th transfer that completed
 * without parking yields (disk.c says why these numbers). */
enum { CAP__DISK_PROBE_EVERY = 16, CAP__DISK_HITS_PER_YIELD = 16 };

/* Per kernel thread: the probe cadence and the hits since the last
 * yield (disk.c). */
extern __thread unsigned cap__disk_tick
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
extern __thread unsigned cap__disk_hits
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* The probe turn: like cap__disk_pread_hot, on the probe's result. */
bool cap__disk_pread_probe(cap__fd *f, int fd, void *buf, size_t n, off_t off, ssize_t *res)
    __attribute__((visibility("hidden")));

/* For the looks of io/disk_warm.c, which share the hot mark: whether f
 * is hot and this is not a probe turn (then no look is made); and a
 * look's answer (every page cached or not) for the mark's streak. */
bool cap__disk_hot_skips_look(cap__fd *f) __attribute__((visibility("hidden")));
void cap__disk_note_look(cap__fd *f, bool hit) __attribute__((visibility("hidden")));

/* The fast path of pread() on a user thread: if fd is a hot file and
 * this read is not a probe that would block, reads it, stores the result
 * (>= 0 or -errno) in *res and returns true; otherwise returns false and
 * does nothing the caller's general path must undo. HOT is set only on a
 * non-O_DIRECT regular file and forgotten when the number is closed
 * (fd.c), so it also says the descriptor is a file; the blocking backend
 * sets it on a file's first read (disk.c, "Hot files"). A plain pread64 of a regular file is short only at end
 * of file, as the blocking call the application made would be. */
static inline bool cap__disk_pread_hot(int fd, void *buf, size_t n, off_t off, ssize_t *res)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || (atomic_load_explicit(&f->flags, memory_order_relaxed) &
                      (CAP__FDF_DISK_HOT | CAP__FDF_DIRECT)) != CAP__FDF_DISK_HOT)
        return false;
    if (__builtin_expect(++cap__disk_tick % CAP__DISK_PROBE_EVERY == 0, 0))
        return cap__disk_pread_probe(f, fd, buf, n, off, res);
    *res = cap__sys6(SYS_pread64, fd, (long)buf, (long)n, (long)off, 0, 0);
    if (__builtin_expect(++cap__disk_hits % CAP__DISK_HITS_PER_YIELD == 0, 0))
        cap__io_hits_turn_end(); /* io.h */
    return true;
}

#endif /* CAP_IO_DISK_HOT_H */

/* SPDX-License-Identifier: MIT */
/*
 * The file side of transfers the kernel makes itself (sendfile, splice
 * out of a file): it reads the device on the calling kernel thread when
 * the pages are not in the page cache, so a cold file blocked the worker
 * for every device read, with all its other user threads. Before such a
 * transfer, cap__disk_warm asks the kernel which pages of the range it
 * will read are cached (cachestat(2), Linux 6.5); if one is missing, the
 * range is read through the disk backend, so only the calling thread
 * waits for the device and the pages land in the cache, and the transfer
 * is held to what that read found. The read copies the range once more
 * than the transfer alone would; it is made only for ranges that miss.
 *
 * A look costs ~0.8 us for 64 KiB here, ~3.8 us for 512 KiB (~7 ns a
 * page), on every transfer of a file that stays cached. So the looks
 * share the hot mark of reads (disk.c, "Hot files"): a file whose looks
 * (or reads) found everything cached HOT_AFTER times in a row is hot, and
 * only every PROBE_EVERY-th transfer out of a hot file looks; one that
 * finds a page missing marks it cold again. The same price as for reads:
 * a transfer of a hot file that misses between two looks reads the
 * device on the worker.
 *
 * Not warmed: O_DIRECT files (their transfer reads the device whatever
 * is cached), CAP_DISKIO=blocking (the backend would block the worker
 * anyway), kernels or sandboxes without cachestat (ENOSYS, then never
 * asked again) and files it does not support. Pages evicted between the
 * look and the transfer are read by the transfer, as before.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/disk_hot.h"
#include "io/diskio.h"
#include "io/io.h"

#ifndef SYS_cachestat
#define SYS_cachestat 451 /* the same number on every architecture */
#endif

/* The kernel's struct cachestat_range and struct cachestat
 * (<linux/mman.h>, Linux 6.5: newer than the headers built against). */
struct warm_range {
    uint64_t off, len;
};
struct warm_stat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* The most one look covers, and so one transfer moves: a socket's send
 * buffer takes less at a time. */
enum { WARM_MAX = 512 * 1024 };

static atomic_bool no_cachestat;

/* Whether every page of [off, off + len) that the file has is cached.
 * Raw calls: errno stays the program's. */
static bool cached(int fd, uint64_t off, uint64_t len)
{
    struct warm_range range = { off, len };
    struct warm_stat st;
    long rc = cap__sys6(SYS_cachestat, fd, (long)&range, (long)&st, 0, 0, 0);
    if (rc != 0) {
        if (rc == -ENOSYS)
            atomic_store_explicit(&no_cachestat, true, memory_order_relaxed);
        return true; /* cannot tell: the transfer reads as before */
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t first = off / page, last = (off + len - 1) / page;
    if (st.nr_cache >= last - first + 1)
        return true;
    /* Pages past the end of the file are never cached: count only the
     * file's (asked only here, where the cheap answer was no). */
    struct stat sb;
    if (cap__sys6(SYS_fstat, fd, (long)&sb, 0, 0, 0, 0) != 0 || sb.st_size <= 0 ||
        (uint64_t)sb.st_size <= off)
        return true; /* nothing to read there: the transfer says so */
    uint64_t end = (uint64_t)sb.st_size - 1;
    if (end / page < last)
        last = end / page;
    return st.nr_cache >= last - first + 1;
}

void cap__disk_warm(int fd, off_t off, size_t *len)
{
    if (*len == 0 || cap__diskio_active == &cap__diskio_blocking ||
        atomic_load_explicit(&no_cachestat, memory_order_relaxed))
        return;
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || cap__fd_has(f, CAP__FDF_DIRECT) || cap__disk_hot_skips_look(f))
        return;
    if (off < 0 && (off = (off_t)cap__sys6(SYS_lseek, fd, 0, SEEK_CUR, 0, 0, 0)) < 0)
        return; /* not seekable: the transfer says what it does */
    size_t want = *len < WARM_MAX ? *len : WARM_MAX;
    *len = want; /* what the look covers */
    bool hit = cached(fd, (uint64_t)off, want);
    cap__disk_note_look(f, hit);
    if (hit)
        return;
    void *buf = malloc(want);
    if (buf == NULL)
        return;
    struct iovec v = { buf, want };
    ssize_t got = cap__diskio_active->rw(CAP__DISK_READ, fd, &v, 1, off, 0);
    free(buf);
    if (got > 0)
        *len = (size_t)got; /* cached now: no more than that */
}

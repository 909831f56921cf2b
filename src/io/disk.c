/* SPDX-License-Identifier: MIT */
/*
 * The front of every disk backend (see diskio.h): the page-cache fast
 * path and blocking-call semantics.
 *
 * Fast path: a transfer first tries preadv2/pwritev2 with RWF_NOWAIT,
 * which completes from the page cache or fails with EAGAIN without
 * blocking; only then does the backend get the request. A cache hit
 * therefore costs one system call and no switch, which is what the paper
 * named as the fix for losing half of NPTL's throughput on cached reads.
 * A kernel or file system that does not support RWF_NOWAIT (EOPNOTSUPP)
 * goes straight to the backend.
 *
 * Full length: a blocking read of a regular file returns less than asked
 * only at end of file, and a blocking write writes everything; a NOWAIT
 * attempt or a backend transfer may be short, so we continue from where
 * it stopped (an error after progress reports the progress).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/diskio.h"
#include "io/io.h"
#include "sched/park.h"
#include "sched/worker.h"

enum { STACK_IOVS = 8 };

static ssize_t raw_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                      off_t off, int rwf)
{
    /* The raw preadv2 takes the offset split in two longs (low, high). */
    long r = syscall(op == CAP__DISK_READ ? SYS_preadv2 : SYS_pwritev2, fd, iov, cnt,
                     (unsigned long)off, (unsigned long)((unsigned long long)off >> 32), rwf);
    return r < 0 ? -errno : r;
}

ssize_t cap__disk_blocking_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                              off_t off, int rwf)
{
    return raw_rw(op, fd, iov, cnt, off, rwf);
}

/* A transfer that completed without parking is no scheduling point by
 * itself: so a thread whose reads all hit the cache (or that uses
 * CAP_DISKIO=blocking) would keep the other threads of its worker, and its
 * timers, from ever running. Yield every HITS_PER_YIELD such transfers of
 * a worker: a yield per hit costs about 12% of cached-read throughput with
 * 100 threads per worker (each yield switches to a cold stack), one per 16
 * about 3%, and the threads' shares stay within a few percent. */
enum { HITS_PER_YIELD = 16 };

static void yield_after_hit(void)
{
    static __thread unsigned hits __attribute__((tls_model("initial-exec")));
    cap__thread *self = cap__current();
    if (self != NULL && ++hits % HITS_PER_YIELD == 0)
        cap__yield(self);
}

/* One transfer: cache first, then the backend. O_DIRECT skips the cache
 * try: it never hits, and RWF_NOWAIT does not make it asynchronous (the
 * kernel refuses only what would block before submission, then submits
 * the device I/O and waits for it with the worker blocked). */
static ssize_t one(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt, off_t off,
                   int rwf, bool direct)
{
    bool blocking = cap__diskio_active == &cap__diskio_blocking;
    if (!blocking && !direct) {
        ssize_t r = raw_rw(op, fd, iov, cnt, off, rwf | RWF_NOWAIT);
        if (r != -EAGAIN && r != -EOPNOTSUPP) {
            yield_after_hit();
            return r;
        }
    }
    ssize_t r = cap__diskio_active->rw(op, fd, iov, cnt, off, rwf);
    if (blocking)
        yield_after_hit();
    return r;
}

ssize_t cap__disk_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt, off_t off,
                     int rwf)
{
    if (rwf & RWF_NOWAIT) /* the caller asked for exactly this */
        return raw_rw(op, fd, iov, cnt, off, rwf);
    if (cnt < 0 || cnt > IOV_MAX)
        return -EINVAL;
    size_t want = 0;
    for (int i = 0; i < cnt; i++)
        want += iov[i].iov_len;

    cap__fd *f = cap__fd_peek(fd);
    bool direct = f != NULL && cap__fd_has(f, CAP__FDF_DIRECT);
    ssize_t r = one(op, fd, iov, cnt, off, rwf, direct);
    if (r <= 0 || (size_t)r == want)
        return r;

    /* Short: continue on a private copy of the vector. */
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    if (cnt > STACK_IOVS && (v = malloc((size_t)cnt * sizeof *v)) == NULL)
        return r;
    memcpy(v, iov, (size_t)cnt * sizeof *v);
    struct iovec *cur = v;
    int left = cnt;
    size_t total = 0;
    while (r > 0) {
        total += (size_t)r;
        if (total == want)
            break;
        if (off != -1)
            off += r;
        size_t skip = (size_t)r;
        while (left > 0 && skip >= cur->iov_len) {
            skip -= cur->iov_len;
            cur++;
            left--;
        }
        cur->iov_base = (char *)cur->iov_base + skip;
        cur->iov_len -= skip;
        r = one(op, fd, cur, left, off, rwf, direct);
    }
    if (v != stack_v)
        free(v);
    return (ssize_t)total;
}

int cap__disk_fsync(int fd, bool datasync)
{
    return cap__diskio_active->fsync(fd, datasync);
}

void cap__disk_flush(struct cap__worker *w)
{
    if (cap__diskio_active->flush != NULL)
        cap__diskio_active->flush(w);
}

/* SPDX-License-Identifier: MIT */
/*
 * The front of every disk backend (see diskio.h): the page-cache fast
 * path and blocking-call semantics.
 *
 * Fast path: a transfer first tries preadv2/pwritev2 with RWF_NOWAIT,
 * which completes from the page cache or fails with EAGAIN (without
 * blocking, but for the device reads some kernels make inside it:
 * SLOW_HIT_NS below); only then does the backend get the request. A cache hit
 * therefore costs one system call and no switch, which is what the paper
 * named as the fix for losing half of NPTL's throughput on cached reads.
 * Reads of a file that keeps hitting use the cheaper plain call (see
 * "Hot files" below); pread() of such a file goes there straight from its
 * wrapper (cap__disk_pread_hot, inlined there from disk_hot.h), skipping
 * the general path's second descriptor lookup, classification and vector
 * bookkeeping.
 * A kernel or file system that does not support RWF_NOWAIT (EOPNOTSUPP)
 * goes straight to the backend, but for buffered writes to a local file
 * system, which are made on the worker (see "Buffered writes" below).
 *
 * Full length: a NOWAIT attempt may stop short of what the blocking call
 * would move (the rest of the range is not cached), so we continue from
 * where it stopped (an error after progress reports the progress). Not
 * after a transfer made as the blocking call (the plain call on the
 * worker, the backend's): its short count is the kernel's answer, which
 * for a regular file is not only end of file (a trace_pipe or a FUSE
 * file returns what it has; a read for more would wait for more). Not a
 * write that stopped at the file size limit either (write_at_fsize_limit):
 * the kernel's call returns that short count.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/disk_hot.h"
#include "io/diskstats.h"
#include "io/diskio.h"
#include "io/io.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/clock.h"

enum { STACK_IOVS = 8 };

static ssize_t raw_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                      off_t off, int rwf)
{
    /* Raw calls: a RWF_NOWAIT try refused (EAGAIN, EOPNOTSUPP) before a
     * transfer that succeeds must not leave its errno to the caller. */
    if (cnt == 1 && rwf == 0) { /* the single-buffer calls skip the vector import */
        bool rd = op == CAP__DISK_READ;
        if (off == -1)
            return cap__sys6(rd ? SYS_read : SYS_write, fd, (long)iov->iov_base,
                             (long)iov->iov_len, 0, 0, 0);
        return cap__sys6(rd ? SYS_pread64 : SYS_pwrite64, fd, (long)iov->iov_base,
                         (long)iov->iov_len, (long)off, 0, 0);
    }
    /* The raw preadv2 takes the offset split in two longs (low, high). */
    return cap__sys6(op == CAP__DISK_READ ? SYS_preadv2 : SYS_pwritev2, fd, (long)iov, cnt,
                     (long)(unsigned long)off, (long)((unsigned long long)off >> 32), rwf);
}

ssize_t cap__disk_blocking_rw(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt,
                              off_t off, int rwf)
{
    return raw_rw(op, fd, iov, cnt, off, rwf);
}

/* A transfer that completed without parking is no scheduling point by
 * itself: so a thread whose reads all hit the cache (or that uses
 * CAP_DISKIO=blocking) would keep the other threads of its worker, and its
 * timers, from ever running. Yield every CAP__DISK_HITS_PER_YIELD (16,
 * disk_hot.h) such transfers of a worker: a yield per hit costs about 12%
 * of cached-read throughput with 100 threads per worker (each yield
 * switches to a cold stack), one per 16 about 3%, and the threads' shares
 * stay within a few percent. Fewer
 * yields did not pay: one per 64 hits, or once a thread has run for a
 * slice (~40 us by the time stamp counter, checked every 16th hit), read
 * no faster than this in same-run A/Bs (bench/io diskread, 200 threads, 2
 * workers). Longer turns also delay new threads: a new thread starts only
 * on a worker's periodic turn (worker.c, every STEAL_QUEUE_EVERY-th
 * yield), one per turn, so the 100th new thread of a worker waits ~6,100
 * yields; at one yield per 64 hits (or a 40 us slice) that outlasted the
 * benchmark's warm-up and the last-created threads made 0.6 of the mean
 * share (at 256, 0.09). */
__thread unsigned cap__disk_hits;

static void yield_after_hit(void)
{
    if (++cap__disk_hits % CAP__DISK_HITS_PER_YIELD == 0)
        cap__io_hits_turn_end();
}

/* Hot files. preadv2(RWF_NOWAIT) costs ~130 ns more than pread64 for a
 * cached 4 KiB read here (~800 ns in all): the vector import, and the
 * part of cached-read throughput we lost to NPTL. So a file whose reads
 * hit the page cache HOT_AFTER times in a row is marked hot, and a hot
 * file is read with the plain call, except every PROBE_EVERY-th read of
 * a worker, which stays a RWF_NOWAIT probe; a probe that would block
 * (EAGAIN) marks the file cold again. The price: a read of a hot file that
 * misses between two probes blocks the worker for that one device read
 * (what CAP_DISKIO=blocking does for every miss). A file with a real
 * miss rate rarely gets HOT_AFTER hits in a row (at 1% misses about half
 * the time, at 10% almost never). Hot state lives in the descriptor's
 * flags (shared, read-mostly); the streak is written only while cold; the
 * probe cadence is per kernel thread, so the hot path writes no shared
 * line. Reads only: writes keep RWF_NOWAIT (or are made on the worker,
 * below).
 * CAP_DISKIO=blocking reads every file with the plain call and blocks the
 * worker on a miss anyway, so there a file is hot after its first read
 * and its probe turn is a plain read too: pread() of a file then takes
 * the wrapper's inline path (one descriptor lookup, the raw call, the
 * yield count) instead of the general one (classification, the vector,
 * the backend's indirect call and libc's syscall(): six returns after
 * the system call instead of one). */
enum { HOT_AFTER = 64, PROBE_EVERY = CAP__DISK_PROBE_EVERY };

/* A RWF_NOWAIT read is no sure "would block" test: on some kernels and
 * devices it makes the device read itself when that is quick, and returns
 * the data. On this project's virtual machines (Linux 6.18, virtio) a
 * RWF_NOWAIT read of a 4 KiB block just evicted returned the data in
 * 1-95% of tries depending on the run (most over a third), after 55 us
 * or more, median 84-103 us (the device read; the EAGAINs took
 * ~30 us, the read's submission), where a cached one takes ~1.2 us (p99
 * under 4 us). Counted as hits, such reads marked a file that kept missing
 * hot (64 in a row), whose reads then all blocked the worker, and a hot
 * file's probe hardly ever saw a miss (io/hot_file_goes_cold_on_eviction
 * failed so under load). So a hit that took longer than SLOW_HIT_NS counts
 * as a miss for the hot mark; a cached read delayed that long (an
 * interrupt, the kernel thread preempted) only costs the file its streak.
 * The clock is read twice around the call, off the hot path. */
enum { SLOW_HIT_NS = 20000 };

__thread unsigned cap__disk_tick;

static bool read_plain(const cap__fd *f, enum cap__disk_op op, int rwf)
{
    return f != NULL && op == CAP__DISK_READ && rwf == 0 && cap__fd_has(f, CAP__FDF_DISK_HOT) &&
           ++cap__disk_tick % PROBE_EVERY != 0;
}

static void note_hit(cap__fd *f)
{
    if (f == NULL || cap__fd_has(f, CAP__FDF_DISK_HOT))
        return;
    uint32_t n = atomic_load_explicit(&f->disk_streak, memory_order_relaxed) + 1;
    atomic_store_explicit(&f->disk_streak, n, memory_order_relaxed);
    if (n >= HOT_AFTER) {
        cap__fd_set(f, CAP__FDF_DISK_HOT);
        cap__disk_count(CAP__DISK_HOT_MARKS);
    }
}

static void note_miss(cap__fd *f)
{
    if (f == NULL)
        return;
    if (atomic_load_explicit(&f->disk_streak, memory_order_relaxed) != 0)
        atomic_store_explicit(&f->disk_streak, 0, memory_order_relaxed);
    if (cap__fd_has(f, CAP__FDF_DISK_HOT))
        cap__fd_clear(f, CAP__FDF_DISK_HOT);
}

bool cap__disk_hot_skips_look(cap__fd *f)
{
    return cap__fd_has(f, CAP__FDF_DISK_HOT) && ++cap__disk_tick % PROBE_EVERY != 0;
}

void cap__disk_note_look(cap__fd *f, bool hit)
{
    if (hit)
        note_hit(f);
    else
        note_miss(f);
}

/* The probe turn of cap__disk_pread_hot (disk_hot.h), here rather than
 * in the general path: that counts the cadence too, so handing it the
 * probe turn would make its read the next, plain one, and a file read
 * only with pread() would never be probed. A probe that would block
 * (EAGAIN) marks the file cold and goes the general way (its RWF_NOWAIT
 * try, then the backend); so does a short or refused one, which the
 * general path redoes and continues (a positioned read has no effect to
 * undo). */
bool cap__disk_pread_probe(cap__fd *f, int fd, void *buf, size_t n, off_t off, ssize_t *res)
{
    /* A negative offset is pread's EINVAL (the wrapper's check, on the
     * general path); to preadv2, -1 is the file position, which the
     * probe would read and move. */
    if (off < 0)
        return false;
    if (cap__diskio_active == &cap__diskio_blocking) { /* nothing to probe for */
        *res = cap__sys6(SYS_pread64, fd, (long)buf, (long)n, (long)off, 0, 0);
        yield_after_hit();
        return true;
    }
    struct iovec v = { buf, n };
    uint64_t start = cap__now();
    long r = cap__sys6(SYS_preadv2, fd, (long)&v, 1, (long)off,
                       (long)((unsigned long long)off >> 32), RWF_NOWAIT);
    cap__disk_count(CAP__DISK_PROBES);
    if (r == -EAGAIN || (r >= 0 && cap__now() - start > SLOW_HIT_NS)) {
        note_miss(f); /* a slow hit read the device: see SLOW_HIT_NS */
        cap__disk_count(CAP__DISK_PROBE_MISSES);
    }
    if (r == -EAGAIN || r == -EOPNOTSUPP || (r >= 0 && (size_t)r < n))
        return false;
    *res = r;
    yield_after_hit();
    return true;
}

/* Buffered writes. ext4 and tmpfs refuse RWF_NOWAIT for buffered writes
 * (EOPNOTSUPP: they cannot say whether a write would block), so every
 * write() to such a file used to leave the worker: ~20 us through the
 * ring (io_uring punts it to an io-wq thread) and ~50 us through the
 * pool, where the call itself costs ~2.6 us on NPTL. Yet such a write
 * rarely blocks for long: it copies into the page cache. So a buffered
 * write to a regular file on a local file system (LOCAL_FS below) that
 * refused RWF_NOWAIT is made on the worker, as NPTL and Go make it, and
 * timed: one that took longer than SLOW_WRITE_NS (a read-modify-write
 * of an uncached page, dirty-page throttling, a journal wait) marks the
 * file slow, and a slow file's writes go to the backend but every
 * PROBE_EVERY-th of a worker, which is made on the worker again and
 * clears the mark when it is quick. The price, as for hot reads: a write
 * that blocks costs the worker's other threads that wait, once per
 * probe on a file that stays slow. Not made on the worker: O_SYNC or
 * O_DSYNC files and RWF_SYNC/RWF_DSYNC/RWF_HIPRI writes (they wait for
 * the device), O_DIRECT (never here), file systems that take RWF_NOWAIT
 * (xfs, btrfs: their refusal means the write would block), and remote or
 * user-space file systems (NFS, FUSE: a write may wait on a server,
 * perhaps one of this process's own threads). The decision is made once
 * per open file description, at its first refused write (an fcntl, an
 * fstat and an fstatfs), and dups share it (fd.c). CAP_FILE_WRITES
 * (start.c) chooses: auto (this), worker (never marked slow) or backend
 * (never on the worker: the ring or the pool, as before). CAP_DISKIO=
 * blocking makes every write on the worker anyway. */
enum { SLOW_WRITE_NS = 250 * 1000 };

static __thread unsigned write_tick __attribute__((tls_model("initial-exec")));

static bool local_fs(long type)
{
    switch (type) {
    case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
        return true;
    default:
        return false;
    }
}

/* Whether f's buffered writes may be made on the worker: decided at the
 * first refused write (two threads deciding at once decide the same). */
static bool decide_inline(cap__fd *f, int fd)
{
    struct stat st;
    struct statfs sf;
    long oflags = syscall(SYS_fcntl, fd, F_GETFL);
    bool ok = cap__file_writes != CAP__FILE_WRITES_BACKEND && oflags >= 0 &&
              !(oflags & O_DSYNC) && /* O_SYNC has the O_DSYNC bit */
              syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) &&
              syscall(SYS_fstatfs, fd, &sf) == 0 && local_fs((long)sf.f_type);
    cap__fd_set(f, ok ? CAP__FDF_WR_CHECKED | CAP__FDF_WR_INLINE : CAP__FDF_WR_CHECKED);
    return ok;
}

/* A write that may be made on the worker now: an inline file, a flag that
 * does not wait for the device, and not slow (or this worker's probe). */
static bool write_here(const cap__fd *f, enum cap__disk_op op, int rwf)
{
    if (f == NULL || op != CAP__DISK_WRITE || (rwf & (RWF_SYNC | RWF_DSYNC | RWF_HIPRI)))
        return false;
    uint32_t fl = atomic_load_explicit(&f->flags, memory_order_relaxed);
    if (!(fl & CAP__FDF_WR_INLINE))
        return false;
    return !(fl & CAP__FDF_WR_SLOW) || ++write_tick % PROBE_EVERY == 0;
}

static ssize_t write_on_worker(cap__fd *f, int fd, const struct iovec *iov, int cnt, off_t off,
                               int rwf)
{
    if (cap__file_writes == CAP__FILE_WRITES_WORKER) {
        ssize_t r = raw_rw(CAP__DISK_WRITE, fd, iov, cnt, off, rwf);
        yield_after_hit();
        return r;
    }
    uint64_t start = cap__now();
    ssize_t r = raw_rw(CAP__DISK_WRITE, fd, iov, cnt, off, rwf);
    bool slow = cap__now() - start > SLOW_WRITE_NS;
    if (slow != cap__fd_has(f, CAP__FDF_WR_SLOW)) {
        if (slow)
            cap__fd_set(f, CAP__FDF_WR_SLOW);
        else
            cap__fd_clear(f, CAP__FDF_WR_SLOW);
    }
    yield_after_hit();
    return r;
}

/* One transfer: cache first, then the backend. O_DIRECT skips the cache
 * try: it never hits, and RWF_NOWAIT does not make it asynchronous (the
 * kernel refuses only what would block before submission, then submits
 * the device I/O and waits for it with the worker blocked). want: the
 * bytes iov holds; *nowait: whether the result is the RWF_NOWAIT try's,
 * which alone may stop short of what the blocking call would move. */
static ssize_t one(enum cap__disk_op op, int fd, const struct iovec *iov, int cnt, off_t off,
                   int rwf, cap__fd *f, bool direct, size_t want, bool *nowait)
{
    *nowait = false; /* set where the result is a RWF_NOWAIT try's (see the top) */
    bool blocking = cap__diskio_active == &cap__diskio_blocking;
    if (!blocking && !direct) {
        if (read_plain(f, op, rwf)) {
            ssize_t r = raw_rw(op, fd, iov, cnt, off, rwf);
            yield_after_hit();
            return r;
        }
        /* Undecided as write_here looked: a thread on another worker may
         * decide between that look and the refusal below, and this write
         * must not take its decision for a refusal to go inline. */
        bool undecided = f != NULL && !cap__fd_has(f, CAP__FDF_WR_CHECKED);
        if (write_here(f, op, rwf))
            return write_on_worker(f, fd, iov, cnt, off, rwf);
        uint64_t start = op == CAP__DISK_READ ? cap__now() : 0;
        ssize_t r = raw_rw(op, fd, iov, cnt, off, rwf | RWF_NOWAIT);
        if (r == -EOPNOTSUPP && op == CAP__DISK_WRITE && undecided && decide_inline(f, fd) &&
            write_here(f, op, rwf))
            return write_on_worker(f, fd, iov, cnt, off, rwf);
        if (r != -EAGAIN && r != -EOPNOTSUPP) {
            if (op == CAP__DISK_READ && r >= 0 && cap__now() - start > SLOW_HIT_NS) {
                note_miss(f); /* it read the device: see SLOW_HIT_NS */
                cap__disk_count(CAP__DISK_NOWAIT_SLOW);
            } else if (op == CAP__DISK_READ && r >= 0) {
                note_hit(f);
                cap__disk_count(CAP__DISK_NOWAIT_HITS);
            }
            /* Not between a short read at the position and the reserve of
             * its rest (reserve_rest): no other thread may run there. */
            if (!(r >= 0 && (size_t)r < want && off == -1 && op == CAP__DISK_READ))
                yield_after_hit();
            *nowait = true;
            return r;
        }
        if (r == -EAGAIN && op == CAP__DISK_READ) {
            note_miss(f);
            cap__disk_count(CAP__DISK_NOWAIT_MISSES);
        }
    }
    ssize_t r = cap__diskio_active->rw(op, fd, iov, cnt, off, rwf);
    if (blocking) {
        if (op == CAP__DISK_READ && rwf == 0 && f != NULL && !direct &&
            !cap__fd_has(f, CAP__FDF_DISK_HOT)) {
            cap__fd_set(f, CAP__FDF_DISK_HOT); /* see "Hot files" */
            cap__disk_count(CAP__DISK_HOT_MARKS);
        }
        yield_after_hit();
    }
    return r;
}

/* Whether the rest of a write that came back short would start at or past
 * the file size limit (RLIMIT_FSIZE). The kernel writes up to the limit
 * and returns the short count; a write that starts there fails with EFBIG
 * and raises SIGXFSZ, whose default action ends the process. A blocking
 * write(2) makes only the first call, so continuing it would raise a
 * signal the application's own call never raises. Asked only after a
 * short write: the limit, then where the next part would go (the end of
 * the file for an appending write, the position for one at -1). */
static bool write_at_fsize_limit(int fd, off_t off, int rwf)
{
    struct rlimit rl;
    if (syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return false;
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    off_t pos = off;
    if ((rwf & RWF_APPEND) || (fl >= 0 && (fl & O_APPEND))) {
        struct stat st;
        if (syscall(SYS_fstat, fd, &st) != 0)
            return false;
        pos = st.st_size;
    } else if (off == -1) {
        pos = (off_t)syscall(SYS_lseek, fd, 0L, SEEK_CUR);
        if (pos < 0)
            return false;
    }
    return (unsigned long long)pos >= (unsigned long long)rl.rlim_cur;
}

/* A read at the file position whose RWF_NOWAIT try stopped short moved
 * the position past what it read; the rest waits in the backend, while
 * the worker runs other threads. Continued at the position, it read what
 * the position said then: a thread that read or moved it meanwhile (an
 * lseek on the same descriptor) got its bytes in the middle of this
 * read's, which read(2) never does (it holds the file's position lock
 * throughout). So the rest is reserved at once: the position is moved past
 * it in the same turn of the worker (no thread of this worker runs between
 * the try and the move), and the rest is read positioned, from where the
 * try stopped. *end: the position after the reserve. False where the
 * position cannot move there, or where the rest runs past the end of the
 * file (a reserve there would leave the position past it, where a write
 * made meanwhile would leave a hole): then the rest is read at the
 * position, as before. */
static bool reserve_rest(int fd, size_t rest, off_t *end)
{
    struct stat st;
    long pos = syscall(SYS_lseek, fd, 0L, SEEK_CUR);
    if (pos < 0 || syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (unsigned long long)pos + rest > (unsigned long long)st.st_size)
        return false;
    long r = syscall(SYS_lseek, fd, (long)rest, SEEK_CUR);
    if (r < 0)
        return false;
    *end = (off_t)r;
    return true;
}

/* The reserved read ended short of it (end of file, an error): the
 * position goes back to where the read ended, unless another call moved
 * it meanwhile (asked and moved in one turn of the worker). */
static void give_back(int fd, off_t reserved, off_t pos)
{
    if (syscall(SYS_lseek, fd, 0L, SEEK_CUR) == (long)reserved)
        syscall(SYS_lseek, fd, (long)pos, SEEK_SET);
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
    /* Nothing to move never waits. The plain call, not RWF_NOWAIT's
     * vector one: a read() of nothing reaches the file (a directory's
     * fails with EISDIR), a vector of nothing does not (the wrappers make
     * those calls themselves). */
    if (want == 0)
        return raw_rw(op, fd, iov, cnt, off, rwf);

    cap__fd *f = cap__fd_peek(fd);
    bool direct = f != NULL && cap__fd_has(f, CAP__FDF_DIRECT);
    bool nowait;
    ssize_t r = one(op, fd, iov, cnt, off, rwf, f, direct, want, &nowait);
    if (r <= 0 || (size_t)r == want || !nowait)
        return r;

    /* Short: continue on a private copy of the vector. */
    struct iovec stack_v[STACK_IOVS], *v = stack_v;
    if (cnt > STACK_IOVS && (v = malloc((size_t)cnt * sizeof *v)) == NULL)
        return r;
    off_t reserved = -1, start = off;
    if (off == -1 && op == CAP__DISK_READ && reserve_rest(fd, want - (size_t)r, &reserved))
        off = start = reserved - (off_t)want; /* continued positioned, from the start */
    memcpy(v, iov, (size_t)cnt * sizeof *v);
    struct iovec *cur = v;
    int left = cnt;
    size_t total = 0;
    while (r > 0) {
        total += (size_t)r;
        if (total == want || !nowait) /* a blocking call's short count stands */
            break;
        if (off != -1)
            off += r;
        if (op == CAP__DISK_WRITE && write_at_fsize_limit(fd, off, rwf))
            break; /* the short count, as the kernel's call returns it */
        size_t skip = (size_t)r;
        while (left > 0 && skip >= cur->iov_len) {
            skip -= cur->iov_len;
            cur++;
            left--;
        }
        cur->iov_base = (char *)cur->iov_base + skip;
        cur->iov_len -= skip;
        r = one(op, fd, cur, left, off, rwf, f, direct, want - total, &nowait);
    }
    if (v != stack_v)
        free(v);
    if (reserved != -1 && total < want) /* end of file, or an error: give back the rest */
        give_back(fd, reserved, start + (off_t)total);
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

bool cap__disk_spin(struct cap__worker *w)
{
    return cap__diskio_active->spin != NULL && cap__diskio_active->spin(w);
}

bool cap__disk_spin_end(struct cap__worker *w)
{
    return cap__diskio_active->spin_end != NULL && cap__diskio_active->spin_end(w);
}

bool cap__disk_spin_awaits(struct cap__worker *w)
{
    return cap__diskio_active->spin_awaits != NULL && cap__diskio_active->spin_awaits(w);
}

bool cap__disk_wait_prepare(struct cap__worker *w, int inst_fd)
{
    return cap__diskio_active->wait_prepare != NULL &&
           cap__diskio_active->wait_prepare(w, inst_fd);
}

bool cap__disk_wait(struct cap__worker *w, uint64_t deadline, bool block)
{
    return cap__diskio_active->wait(w, deadline, block);
}

void cap__disk_wake(struct cap__worker *w)
{
    cap__diskio_active->wake(w);
}

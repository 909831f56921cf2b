/* SPDX-License-Identifier: MIT */
/* Description: sendfile() and splice() out of a file whose pages are not
 * in the page cache park their thread for the device reads instead of
 * blocking the worker: on CAP_WORKERS=1 a yielding thread runs during
 * each such call. Before, the kernel's transfer read the device on the
 * worker, and every other thread of it waited too. Each call moves 64 KiB
 * from a file evicted just before (written again through an O_DIRECT
 * descriptor, which drops the cached range), into a Unix socket or a
 * pipe that takes it whole, so the call never parks for room; the bytes
 * are then read back and compared, on every worker count. Only calls
 * whose range mincore(2) showed partly evicted count; a run where none
 * did is a skip, not a pass. Then the hot mark the looks share with reads
 * (disk.c, "Hot files"): 80 transfers of a cached range mark the file hot
 * (cap_disk_stats), after which only every 16th transfer looks; of 32
 * transfers of ranges evicted before them, all but at most the 15 before
 * the first look must park (the look that finds the miss marks the file
 * cold again). Skipped under CAP_DISKIO=blocking (it blocks
 * the worker by design), where O_DIRECT is refused, and on kernels
 * without cachestat(2) (Linux 6.5), where the library cannot tell a cold
 * range. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>

#include "io/io_util.h"

enum { PAGE = 4096, CHUNK_PAGES = 16, CHUNKS = 8, ROUNDS = 16 };
#define CHUNK ((size_t)CHUNK_PAGES * PAGE)
#define FILE_SIZE ((size_t)CHUNKS * CHUNK)

static struct ticker tk;

static unsigned char byte_at(size_t pos)
{
    return (unsigned char)(pos * 7 + pos / 4093);
}

static void fill(unsigned char *b, size_t from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = byte_at(from + i);
}

/* Whether some page of [off, off + CHUNK) of the mapping is not cached. */
static bool partly_evicted(const unsigned char *map, size_t off)
{
    unsigned char v[CHUNK_PAGES];
    CHECK_EQ(mincore((void *)(map + off), CHUNK, v), 0);
    for (int i = 0; i < CHUNK_PAGES; i++)
        if (!(v[i] & 1))
            return true;
    return false;
}

static void check_bytes(int fd, size_t off)
{
    static unsigned char got[CHUNK], want[CHUNK];
    size_t n = 0;
    while (n < CHUNK) {
        ssize_t r = read(fd, got + n, CHUNK - n);
        CHECK_GT(r, 0);
        n += (size_t)r;
    }
    fill(want, off, CHUNK);
    CHECK(memcmp(got, want, CHUNK) == 0);
}

static bool have_cachestat(int fd)
{
    struct {
        uint64_t off, len;
    } range = { 0, PAGE };
    uint64_t st[5];
    return syscall(451 /* cachestat */, fd, &range, st, 0) == 0 || errno != ENOSYS;
}

int main(void)
{
    const char *disk = getenv("CAP_DISKIO");
    if (disk != NULL && strcmp(disk, "blocking") == 0)
        SKIP("CAP_DISKIO=blocking blocks the worker");
    char path[] = "/tmp/capriccio-io-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    unsigned char *data = aligned_alloc(PAGE, FILE_SIZE);
    CHECK(data != NULL);
    fill(data, 0, FILE_SIZE);
    CHECK_EQ(write(fd, data, FILE_SIZE), (ssize_t)FILE_SIZE);
    CHECK_EQ(fsync(fd), 0);
    int direct = open(path, O_WRONLY | O_DIRECT);
    unlink(path);
    if (direct < 0)
        SKIP("O_DIRECT refused here");
    if (!have_cachestat(fd))
        SKIP("no cachestat(2) in this kernel");
    CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0); /* no readahead into the next chunk */
    unsigned char *map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(map != MAP_FAILED);

    int sv[2], p[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int sndbuf = 4 * (int)CHUNK;
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    CHECK_EQ(pipe(p), 0);
    CHECK_GE(fcntl(p[1], F_SETPIPE_SZ, (int)CHUNK), (int)CHUNK);

    bool same_worker = cap_worker_count() == 1;
    cap_thread_t t = spawn(ticker_run, &tk);
    int counted = 0;
    for (int round = 0; round < ROUNDS; round++) {
        size_t at = (size_t)(round * 5 % CHUNKS) * CHUNK;
        CHECK_EQ(pwrite(direct, data + at, CHUNK, (off_t)at), (ssize_t)CHUNK); /* evicts */
        bool cold = partly_evicted(map, at);
        long before = atomic_load(&tk.ticks);
        bool by_splice = round % 2 == 1;
        if (by_splice) {
            loff_t off = (loff_t)at;
            CHECK_EQ(splice(fd, &off, p[1], NULL, CHUNK, 0), (ssize_t)CHUNK);
            CHECK_EQ(off, (loff_t)(at + CHUNK));
        } else {
            off_t off = (off_t)at;
            CHECK_EQ(sendfile(sv[0], fd, &off, CHUNK), (ssize_t)CHUNK);
            CHECK_EQ(off, (off_t)(at + CHUNK));
        }
        long after = atomic_load(&tk.ticks);
        check_bytes(by_splice ? p[0] : sv[1], at);
        if (!cold)
            continue;
        counted++;
        if (same_worker && after == before)
            fprintf(stderr, "round %d: the %s of a cold range blocked the worker\n", round,
                    by_splice ? "splice" : "sendfile");
        if (same_worker)
            CHECK_GT(after, before); /* the ticker ran during the call */
    }
    atomic_store(&tk.stop, 1);
    join(t);
    fprintf(stderr, "%d of %d transfers found their range evicted\n", counted, ROUNDS);
    if (counted == 0)
        SKIP("the machine did not evict the ranges");

    /* Hot: the cached chunk 0, sent until the file is marked hot. */
    cap_disk_stats_t s0, s1;
    CHECK_EQ(cap_disk_stats(&s0), 0);
    for (int i = 0; i < 80; i++) {
        off_t off = 0;
        CHECK_EQ(sendfile(sv[0], fd, &off, CHUNK), (ssize_t)CHUNK);
        check_bytes(sv[1], 0);
    }
    CHECK_EQ(cap_disk_stats(&s1), 0);
    CHECK_GT(s1.hot_marks, s0.hot_marks);
    int parked = 0, cold_rounds = 0;
    tk.stop = 0;
    t = spawn(ticker_run, &tk);
    for (int round = 0; round < 32; round++) {
        size_t at = (size_t)(1 + round % (CHUNKS - 1)) * CHUNK;
        CHECK_EQ(pwrite(direct, data + at, CHUNK, (off_t)at), (ssize_t)CHUNK);
        bool cold = partly_evicted(map, at);
        long before = atomic_load(&tk.ticks);
        off_t off = (off_t)at;
        CHECK_EQ(sendfile(sv[0], fd, &off, CHUNK), (ssize_t)CHUNK);
        long after = atomic_load(&tk.ticks);
        check_bytes(sv[1], at);
        cold_rounds += cold;
        parked += cold && after > before;
    }
    atomic_store(&tk.stop, 1);
    join(t);
    fprintf(stderr, "hot file: %d of %d transfers of an evicted range parked\n", parked,
            cold_rounds);
    if (same_worker) /* a round the machine did not evict counts neither way */
        CHECK_GE(parked, cold_rounds - 15);

    /* The file position moves as the kernel's calls move it. */
    CHECK_EQ(lseek(fd, (off_t)CHUNK, SEEK_SET), (off_t)CHUNK);
    CHECK_EQ(pwrite(direct, data + CHUNK, CHUNK, (off_t)CHUNK), (ssize_t)CHUNK);
    CHECK_EQ(sendfile(sv[0], fd, NULL, CHUNK), (ssize_t)CHUNK);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)(2 * CHUNK));
    check_bytes(sv[1], CHUNK);
    munmap(map, FILE_SIZE);
    free(data);
    close(direct);
    close(fd);
    return 0;
}

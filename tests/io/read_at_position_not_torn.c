/* SPDX-License-Identifier: MIT */
/* Description: a read() of a regular file at the file position is one
 * transfer with respect to the position: another thread's lseek (or read)
 * on the same descriptor comes before it or after it, never in the middle
 * of its bytes. A read whose first part is cached and whose rest is not
 * used to read the cached part with RWF_NOWAIT (moving the position), then
 * wait for the rest in the backend at whatever the position said by
 * then: a thread of the same worker that ran meanwhile and moved it got
 * other records' bytes into the middle of the read. One worker (a second
 * one's thread could still land in the few instructions between the two
 * steps). Each round evicts the file and caches the first half of the
 * first record (skipped where posix_fadvise cannot evict: every read
 * then hits the cache and is one call). */
#include <fcntl.h>
#include <stdio.h>

#include "io/io_util.h"

enum { REC = 8192, NREC = 64, ROUNDS = 20 };

static int fd;

static void *seeker(void *arg)
{
    (void)arg;
    CHECK_EQ(lseek(fd, (off_t)(NREC - 1) * REC, SEEK_SET), (off_t)(NREC - 1) * REC);
    return NULL;
}

int main(void)
{
    char path[] = "/tmp/capriccio-torn-XXXXXX";
    int w = mkstemp(path);
    CHECK_GE(w, 0);
    static char b[REC];
    for (int i = 0; i < NREC; i++) {
        memset(b, 'A' + i % 26, REC);
        CHECK_EQ(write(w, b, REC), REC);
    }
    CHECK_EQ(fsync(w), 0);
    CHECK_EQ(close(w), 0);
    for (int round = 0; round < ROUNDS; round++) {
        fd = open(path, O_RDONLY);
        CHECK_GE(fd, 0);
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0); /* no readahead */
        CHECK_EQ(pread(fd, b, 4096, 0), 4096);                    /* half a record cached */
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL), 0);
        cap_thread_t t = spawn(seeker, NULL); /* runs when the read waits */
        memset(b, 0, REC);
        ssize_t r = read(fd, b, REC);
        join(t);
        CHECK_EQ(r, REC);
        CHECK_EQ(b[REC - 1], b[0]); /* one record, whichever */
        off_t pos = lseek(fd, 0, SEEK_CUR);
        /* Read first (then the seek), or seek first (then the read). */
        CHECK(pos == (off_t)(NREC - 1) * REC || pos == (off_t)NREC * REC);
        CHECK_EQ(close(fd), 0);
    }
    CHECK_EQ(unlink(path), 0);
    printf("ok\n");
    return 0;
}

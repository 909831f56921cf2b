/* SPDX-License-Identifier: MIT */
/* Description: regular-file I/O keeps the file position and the results
 * the kernel gives, whatever serves the call: read and write move the
 * position, pread and pwrite do not; O_APPEND writes go to the end and
 * move it there; a dup shares it; readv/writev and preadv/pwritev across
 * buffers; 0 at and beyond the end; a shrunk file reads short; sendfile
 * with no offset moves the position, with one moves only the offset;
 * ESPIPE for lseek and pread on a pipe, EINVAL for fsync on one; EBADF
 * for a write to a read-only descriptor; 0-byte transfers; and two
 * threads reading under a lock get consecutive records. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

static off_t pos(int fd)
{
    return lseek(fd, 0, SEEK_CUR);
}

static int temp_file(void)
{
    char path[] = "/tmp/capfileioXXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    EXPECT_EQ(unlink(path), 0);
    return fd;
}

static void positions(void)
{
    int fd = temp_file();
    char buf[64];
    EXPECT_EQ(write(fd, "0123456789", 10), 10);
    EXPECT_EQ(pos(fd), 10);
    EXPECT_EQ(pwrite(fd, "abc", 3, 2), 3);
    EXPECT_EQ(pos(fd), 10);
    EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
    EXPECT_EQ(read(fd, buf, 4), 4);
    EXPECT_EQ(memcmp(buf, "01ab", 4), 0);
    EXPECT_EQ(pos(fd), 4);
    EXPECT_EQ(pread(fd, buf, 3, 7), 3);
    EXPECT_EQ(memcmp(buf, "789", 3), 0);
    EXPECT_EQ(pos(fd), 4);
    EXPECT_EQ(read(fd, buf, sizeof buf), 6); /* to the end */
    EXPECT_EQ(memcmp(buf, "c56789", 6), 0);
    EXPECT_EQ(read(fd, buf, sizeof buf), 0);
    EXPECT_EQ(pread(fd, buf, 4, 100), 0);
    EXPECT_EQ(write(fd, buf, 0), 0);
    EXPECT_EQ(read(fd, buf, 0), 0);

    /* A dup shares the position. */
    int d = dup(fd);
    EXPECT(d >= 0);
    EXPECT_EQ(lseek(fd, 1, SEEK_SET), 1);
    EXPECT_EQ(read(d, buf, 2), 2);
    EXPECT_EQ(memcmp(buf, "1a", 2), 0);
    EXPECT_EQ(pos(fd), 3);
    EXPECT_EQ(close(d), 0);

    /* Vectors. */
    struct iovec v[3] = { { buf, 2 }, { buf + 10, 3 }, { buf + 20, 4 } };
    EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
    EXPECT_EQ(readv(fd, v, 3), 9);
    EXPECT_EQ(memcmp(buf, "01", 2), 0);
    EXPECT_EQ(memcmp(buf + 10, "abc", 3), 0);
    EXPECT_EQ(memcmp(buf + 20, "5678", 4), 0);
    EXPECT_EQ(pos(fd), 9);
    struct iovec w[2] = { { "XY", 2 }, { "Z", 1 } };
    EXPECT_EQ(pwritev(fd, w, 2, 10), 3);
    EXPECT_EQ(pos(fd), 9);
    EXPECT_EQ(preadv(fd, v, 1, 11), 2);
    EXPECT_EQ(memcmp(buf, "YZ", 2), 0);
    EXPECT_EQ(writev(fd, w, 2), 3); /* at 9 */
    EXPECT_EQ(pos(fd), 12);
    EXPECT_EQ(pread(fd, buf, 13, 0), 13);
    EXPECT_EQ(memcmp(buf, "01abc5678XYZZ", 13), 0);

    /* Shrunk: reads end at the new end. */
    EXPECT_EQ(ftruncate(fd, 5), 0);
    EXPECT_EQ(lseek(fd, 3, SEEK_SET), 3);
    EXPECT_EQ(read(fd, buf, sizeof buf), 2);
    EXPECT_EQ(pread(fd, buf, 8, 4), 1);
    EXPECT_EQ(fsync(fd), 0);
    EXPECT_EQ(fdatasync(fd), 0);
    EXPECT_EQ(close(fd), 0);
}

static void appends(void)
{
    int fd = temp_file();
    EXPECT_EQ(write(fd, "head", 4), 4);
    int fl = fcntl(fd, F_GETFL);
    EXPECT_EQ(fcntl(fd, F_SETFL, fl | O_APPEND), 0);
    EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
    EXPECT_EQ(write(fd, "tail", 4), 4);
    EXPECT_EQ(pos(fd), 8);
    char buf[16];
    EXPECT_EQ(pread(fd, buf, sizeof buf, 0), 8);
    EXPECT_EQ(memcmp(buf, "headtail", 8), 0);

    /* Read-only descriptor: EBADF for a write. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY);
    EXPECT(ro >= 0);
    errno = 0;
    EXPECT_EQ(write(ro, "x", 1), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(close(ro), 0);
    EXPECT_EQ(close(fd), 0);
}

static void pipes_and_sendfile(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    errno = 0;
    EXPECT_EQ(lseek(p[0], 0, SEEK_CUR), -1);
    EXPECT_EQ(errno, ESPIPE);
    char buf[64];
    errno = 0;
    EXPECT_EQ(pread(p[0], buf, 1, 0), -1);
    EXPECT_EQ(errno, ESPIPE);
    errno = 0;
    EXPECT_EQ(fsync(p[1]), -1);
    EXPECT_EQ(errno, EINVAL);

    int fd = temp_file();
    EXPECT_EQ(write(fd, "sendfile-data", 13), 13);
    EXPECT_EQ(lseek(fd, 4, SEEK_SET), 4);
    EXPECT_EQ(sendfile(p[1], fd, NULL, 4), 4); /* from the position */
    EXPECT_EQ(pos(fd), 8);
    EXPECT_EQ(read(p[0], buf, sizeof buf), 4);
    EXPECT_EQ(memcmp(buf, "file", 4), 0);
    off_t off = 9;
    EXPECT_EQ(sendfile(p[1], fd, &off, 100), 4); /* to the end */
    EXPECT_EQ(off, 13);
    EXPECT_EQ(pos(fd), 8);
    EXPECT_EQ(read(p[0], buf, sizeof buf), 4);
    EXPECT_EQ(memcmp(buf, "data", 4), 0);
    EXPECT_EQ(sendfile(p[1], fd, &off, 10), 0); /* at the end */
    EXPECT_EQ(close(fd), 0);
    EXPECT_EQ(close(p[0]), 0);
    EXPECT_EQ(close(p[1]), 0);
}

/* ---- two readers sharing a descriptor under a lock ---------------------- */

enum { RECORDS = 4000, RECORD = 16 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int shared_fd;
static int taken[RECORDS];

static void *reader(void *arg)
{
    (void)arg;
    char rec[RECORD + 1];
    for (;;) {
        EXPECT_EQ(pthread_mutex_lock(&lock), 0);
        ssize_t n = read(shared_fd, rec, RECORD);
        EXPECT_EQ(pthread_mutex_unlock(&lock), 0);
        if (n == 0)
            return NULL;
        EXPECT_EQ(n, RECORD);
        rec[RECORD] = '\0';
        int k = atoi(rec);
        EXPECT(k >= 0 && k < RECORDS);
        taken[k]++;
    }
}

static void shared_readers(void)
{
    shared_fd = temp_file();
    char rec[RECORD + 1];
    for (int i = 0; i < RECORDS; i++) {
        snprintf(rec, sizeof rec, "%015d\n", i);
        EXPECT_EQ(write(shared_fd, rec, RECORD), RECORD);
    }
    EXPECT_EQ(lseek(shared_fd, 0, SEEK_SET), 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, reader, NULL), 0);
    for (int i = 0; i < 2; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < RECORDS; i++)
        EXPECT_EQ(taken[i], 1);
    EXPECT_EQ(close(shared_fd), 0);
}

int main(void)
{
    positions();
    appends();
    pipes_and_sendfile();
    shared_readers();
    return 0;
}

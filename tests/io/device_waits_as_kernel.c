/* SPDX-License-Identifier: MIT */
/* Description: the calls that wait for a device, which user threads make
 * on the offload pool (msync with MS_SYNC, copy_file_range,
 * sync_file_range, syncfs, sync, tcdrain), give what the kernel gives:
 * msync's bytes reach the file and a misaligned address is EINVAL;
 * copy_file_range copies from and to the given offsets (the files'
 * positions untouched) or from and to the positions (moved), and a bad
 * descriptor is EBADF; so does sendfile from file to file; sync_file_range and syncfs work, with EBADF and
 * EINVAL on bad input; tcdrain is 0 on a terminal, ENOTTY on a pipe and
 * EBADF on a bad number. Each of several threads doing them at once
 * gets its own result. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <termios.h>

#include "io/io_util.h"

static int temp_file(void)
{
    char path[] = "/tmp/cap-device-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    return fd;
}

static void msync_cases(void)
{
    int fd = temp_file();
    CHECK_EQ(ftruncate(fd, 8192), 0);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    memcpy(m + 4096, "mapped", 6);
    CHECK_EQ(msync(m, 8192, MS_SYNC), 0);
    CHECK_EQ(msync(m, 8192, MS_ASYNC), 0);
    char got[6];
    CHECK_EQ(pread(fd, got, 6, 4096), 6);
    CHECK_EQ(memcmp(got, "mapped", 6), 0);
    errno = 0;
    CHECK_EQ(msync(m + 1, 100, MS_SYNC), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(msync(m, 4096, MS_SYNC | MS_ASYNC), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(munmap(m, 8192), 0);
    CHECK_EQ(close(fd), 0);
}

static void copy_cases(void)
{
    int in = temp_file(), out = temp_file();
    CHECK_EQ(pwrite(in, "0123456789", 10, 0), 10);
    off_t off_in = 2, off_out = 5;
    CHECK_EQ(copy_file_range(in, &off_in, out, &off_out, 4, 0), 4);
    CHECK_EQ(off_in, 6);
    CHECK_EQ(off_out, 9);
    CHECK_EQ(lseek(in, 0, SEEK_CUR), 0); /* positions untouched */
    CHECK_EQ(lseek(out, 0, SEEK_CUR), 0);
    char got[16] = { 0 };
    CHECK_EQ(pread(out, got, sizeof got, 5), 4);
    CHECK_EQ(memcmp(got, "2345", 4), 0);
    CHECK_EQ(lseek(in, 7, SEEK_SET), 7);
    CHECK_EQ(copy_file_range(in, NULL, out, NULL, 100, 0), 3); /* to EOF */
    CHECK_EQ(lseek(in, 0, SEEK_CUR), 10);
    CHECK_EQ(lseek(out, 0, SEEK_CUR), 3);
    CHECK_EQ(pread(out, got, 3, 0), 3);
    CHECK_EQ(memcmp(got, "789", 3), 0);
    errno = 0;
    CHECK_EQ(copy_file_range(-1, NULL, out, NULL, 4, 0), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(copy_file_range(in, NULL, out, NULL, 4, 1), -1); /* no flags defined */
    CHECK_EQ(errno, EINVAL);

    /* sendfile from file to file (the same pool path): from an offset
     * (in's position untouched), then from in's position (moved). */
    off_t from = 1;
    CHECK_EQ(lseek(out, 0, SEEK_SET), 0);
    CHECK_EQ(sendfile(out, in, &from, 3), 3);
    CHECK_EQ(from, 4);
    CHECK_EQ(lseek(in, 0, SEEK_CUR), 10);
    CHECK_EQ(lseek(in, 8, SEEK_SET), 8);
    CHECK_EQ(sendfile(out, in, NULL, 10), 2);
    CHECK_EQ(lseek(in, 0, SEEK_CUR), 10);
    CHECK_EQ(lseek(out, 0, SEEK_CUR), 5);
    CHECK_EQ(pread(out, got, 5, 0), 5);
    CHECK_EQ(memcmp(got, "12389", 5), 0);
    errno = 0;
    CHECK_EQ(sendfile(out, -1, NULL, 1), -1);
    CHECK_EQ(errno, EBADF);

    CHECK_EQ(sync_file_range(out, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                            SYNC_FILE_RANGE_WAIT_AFTER), 0);
    errno = 0;
    CHECK_EQ(sync_file_range(-1, 0, 0, SYNC_FILE_RANGE_WRITE), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(sync_file_range(out, -1, 0, SYNC_FILE_RANGE_WRITE), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(syncfs(out), 0);
    errno = 0;
    CHECK_EQ(syncfs(-1), -1);
    CHECK_EQ(errno, EBADF);
    sync();
    CHECK_EQ(close(in), 0);
    CHECK_EQ(close(out), 0);
}

static void tcdrain_cases(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    errno = 0;
    CHECK_EQ(tcdrain(p[1]), -1);
    CHECK_EQ(errno, ENOTTY);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    errno = 0;
    CHECK_EQ(tcdrain(-1), -1); /* (a closed number may be another thread's by now) */
    CHECK_EQ(errno, EBADF);
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0)
        return; /* no terminals here: the pipe cases above stand */
    CHECK_EQ(grantpt(master), 0);
    CHECK_EQ(unlockpt(master), 0);
    char name[64]; /* ptsname's buffer is shared by the threads of this test */
    CHECK_EQ(ptsname_r(master, name, sizeof name), 0);
    int slave = open(name, O_RDWR | O_NOCTTY);
    CHECK_GE(slave, 0);
    CHECK_EQ(write(slave, "out\n", 4), 4);
    CHECK_EQ(tcdrain(slave), 0);
    CHECK_EQ(close(slave), 0);
    CHECK_EQ(close(master), 0);
}

static void *all_cases(void *arg)
{
    (void)arg;
    msync_cases();
    copy_cases();
    tcdrain_cases();
    return NULL;
}

int main(void)
{
    all_cases(NULL);
    enum { THREADS = 8 };
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(all_cases, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    return 0;
}

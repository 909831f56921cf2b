/* SPDX-License-Identifier: MIT */
/* Description: copy_file_range, sync_file_range and fallocate are
 * cancellation points, as glibc's are (SYSCALL_CANCEL there; POSIX does
 * not name them): a cancel pending at entry acts before the call does
 * anything (nothing is copied or allocated). sendfile and syncfs are not
 * points, in glibc and here: they run, and the cancel acts at the next
 * point. The library made the first two no points and did not intercept
 * fallocate, so a cancelled thread went on copying or allocating. */
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#include "io/io_util.h"

enum kind { COPY_FILE_RANGE, SYNC_FILE_RANGE, FALLOCATE, SENDFILE, SYNCFS };

static int in, out;
static atomic_int ran; /* calls that returned before the cancel acted */

static long call(enum kind k)
{
    switch (k) {
    case COPY_FILE_RANGE: {
        loff_t a = 0, b = 0;
        return copy_file_range(in, &a, out, &b, 4, 0);
    }
    case SYNC_FILE_RANGE: return sync_file_range(in, 0, 0, 0);
    case FALLOCATE: return fallocate(out, 0, 0, 4096);
    case SENDFILE: {
        off_t a = 0;
        return sendfile(out, in, &a, 4);
    }
    case SYNCFS: return syncfs(in);
    }
    return -1;
}

static void *self_cancelling(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    CHECK_GE(call(k), 0);
    atomic_fetch_add(&ran, 1);
    cap_testcancel();
    return NULL;
}

static off_t size_of(int fd)
{
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    return st.st_size;
}

int main(void)
{
    char path[] = "/tmp/capriccio-cancel-copy-XXXXXX";
    in = mkstemp(path);
    CHECK_GE(in, 0);
    CHECK_EQ(unlink(path), 0);
    char path2[] = "/tmp/capriccio-cancel-copy-XXXXXX";
    out = mkstemp(path2);
    CHECK_GE(out, 0);
    CHECK_EQ(unlink(path2), 0);
    CHECK_EQ(write(in, "data", 4), 4);

    /* Points: cancelled at entry, nothing copied. */
    CHECK(join(spawn(self_cancelling, (void *)(long)COPY_FILE_RANGE)) == CAP_CANCELED);
    CHECK(join(spawn(self_cancelling, (void *)(long)SYNC_FILE_RANGE)) == CAP_CANCELED);
    CHECK(join(spawn(self_cancelling, (void *)(long)FALLOCATE)) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(size_of(out), 0);
    /* Not points: they run, then the cancel acts. */
    CHECK(join(spawn(self_cancelling, (void *)(long)SENDFILE)) == CAP_CANCELED);
    CHECK_EQ(size_of(out), 4);
    CHECK(join(spawn(self_cancelling, (void *)(long)SYNCFS)) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&ran), 2);
    CHECK_EQ(close(in), 0);
    CHECK_EQ(close(out), 0);
    printf("ok\n");
    return 0;
}

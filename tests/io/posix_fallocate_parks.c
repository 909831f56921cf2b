/* SPDX-License-Identifier: MIT */
/* Description: posix_fallocate lets the worker's other threads run while
 * the file system allocates (on CAP_WORKERS=1 too: glibc made the system
 * call with its internal call, on the worker, and a yielding ticker did
 * not move during it), and answers as glibc's: 0 and the file grown,
 * the error returned (EBADF, EINVAL, ESPIPE) with errno untouched, also
 * through posix_fallocate64. */
#include <sys/stat.h>

#include "io/io_util.h"

enum { MIB = 1 << 20 };

int main(void)
{
    struct ticker t = { 0 };
    cap_thread_t tt = spawn(ticker_run, &t);
    int fd = unlinked_temp_file(0);
    while (atomic_load(&t.ticks) == 0) /* it runs: then it moves whenever its worker is free */
        cap_yield();

    errno = EDOM;
    long before = atomic_load(&t.ticks);
    CHECK_EQ(posix_fallocate(fd, 0, 16 * MIB), 0);
    CHECK_GT(atomic_load(&t.ticks), before);
    CHECK_EQ(errno, EDOM);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 16 * MIB);
    CHECK_EQ(posix_fallocate64(fd, 16 * MIB, MIB), 0);
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 17 * MIB);

    CHECK_EQ(posix_fallocate(-1, 0, MIB), EBADF);
    CHECK_EQ(posix_fallocate(fd, 0, 0), EINVAL);
    CHECK_EQ(posix_fallocate(fd, -1, MIB), EINVAL);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(posix_fallocate(p[1], 0, MIB), ESPIPE);
    CHECK_EQ(errno, EDOM);

    atomic_store(&t.stop, 1);
    join(tt);
    close(p[0]);
    close(p[1]);
    close(fd);
    return 0;
}

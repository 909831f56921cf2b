/* SPDX-License-Identifier: MIT */
/* Description: copy_file_range and a file-to-file sendfile that would
 * write past the file size limit (RLIMIT_FSIZE) fail with EFBIG and raise
 * SIGXFSZ in the calling thread, as the kernel's calls do. The runtime
 * makes them on the offload pool (unless CAP_DISKIO=blocking), whose
 * threads block every signal: the signal stayed pending there for good
 * and no handler ran. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/sendfile.h>

#include "io/io_util.h"

enum { LIMIT = 1000 };

static atomic_int signals;
static _Atomic(cap_thread_t) handled_by; /* the thread the handler last ran in */

static void on_xfsz(int sig)
{
    (void)sig;
    atomic_store(&handled_by, cap_thread_self());
    atomic_fetch_add(&signals, 1);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_xfsz };
    CHECK_EQ(sigaction(SIGXFSZ, &sa, NULL), 0);
    int in = unlinked_temp_file(0), out = unlinked_temp_file(0);
    static char b[4096];
    CHECK_EQ(write(in, b, sizeof b), (ssize_t)sizeof b);
    struct rlimit rl = { LIMIT, RLIM_INFINITY };
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);

    loff_t off_in = 0, off_out = 2 * LIMIT;
    errno = 0;
    CHECK_EQ(copy_file_range(in, &off_in, out, &off_out, 100, 0), -1);
    CHECK_EQ(errno, EFBIG);
    CHECK_EQ(atomic_load(&signals), 1);
    CHECK(atomic_load(&handled_by) == cap_thread_self());

    CHECK_EQ(lseek(out, 3 * LIMIT, SEEK_SET), 3 * LIMIT);
    off_t from = 0;
    errno = 0;
    CHECK_EQ(sendfile(out, in, &from, 100), -1);
    CHECK_EQ(errno, EFBIG);
    CHECK_EQ(atomic_load(&signals), 2);

    CHECK_EQ(close(in), 0);
    CHECK_EQ(close(out), 0);
    printf("ok\n");
    return 0;
}

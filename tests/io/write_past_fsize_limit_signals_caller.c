/* SPDX-License-Identifier: MIT */
/* Description: a write to a regular file that starts past the file size
 * limit (RLIMIT_FSIZE) fails with EFBIG and raises SIGXFSZ in the calling
 * thread, as the kernel's call does, also when the disk backend makes it
 * elsewhere: on an offload pool thread (CAP_DISKIO=threads, and the ring's
 * file-position writes), which blocks every signal, or on an io_uring
 * worker, where the signal was lost. Run with CAP_FILE_WRITES=backend
 * (tests.cmake), so buffered writes go to the backend; an O_DIRECT write
 * goes there anyway. The handler must run in the writing thread. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>

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

struct job {
    int fd;
    void *buf;
    size_t n;
    off_t off;
};

/* One write past the limit on a thread of its own: EFBIG, and the
 * signal handled by that thread before the call returned. */
static void *write_past(void *arg)
{
    struct job *j = arg;
    int before = atomic_load(&signals);
    errno = 0;
    ssize_t r = j->off >= 0 ? pwrite(j->fd, j->buf, j->n, j->off) : write(j->fd, j->buf, j->n);
    CHECK_EQ(r, -1);
    CHECK_EQ(errno, EFBIG);
    CHECK_EQ(atomic_load(&signals), before + 1);
    CHECK(atomic_load(&handled_by) == cap_thread_self());
    return NULL;
}

static void past(int fd, void *buf, size_t n, off_t off)
{
    struct job j = { fd, buf, n, off };
    join(spawn(write_past, &j));
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_xfsz };
    CHECK_EQ(sigaction(SIGXFSZ, &sa, NULL), 0);
    struct rlimit rl = { LIMIT, RLIM_INFINITY };
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    static char b[4096] __attribute__((aligned(4096)));
    memset(b, 'x', sizeof b);

    char path[] = "/tmp/capriccio-xfsz-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    past(fd, b, 10, 2 * LIMIT);
    CHECK_EQ(lseek(fd, 3 * LIMIT, SEEK_SET), 3 * LIMIT);
    past(fd, b, 10, -1);
    CHECK_EQ(close(fd), 0);

    /* O_DIRECT: always the backend (a file system without it: skipped). */
    fd = open(path, O_RDWR | O_DIRECT);
    if (fd >= 0) {
        past(fd, b, sizeof b, 2 * (off_t)sizeof b);
        CHECK_EQ(close(fd), 0);
    } else {
        CHECK_EQ(errno, EINVAL);
    }
    CHECK_EQ(unlink(path), 0);
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: open() of a FIFO, which waits in the kernel until the other
 * end is opened, parks only the calling user thread: on one worker the
 * rest of the program (here, the thread that opens the other end) keeps
 * running. Opens that cannot wait keep their plain behaviour: O_NONBLOCK
 * for reading succeeds at once, for writing without a reader fails with
 * ENXIO, a missing path fails with ENOENT, regular files open as usual. */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "io/io_util.h"

static char dir[] = "/tmp/cap-fifo-XXXXXX";
static char fifo[64], file[64];
static atomic_int reader_in;
static char got[8];

static void *fifo_reader(void *arg)
{
    (void)arg;
    atomic_store(&reader_in, 1);
    int fd = open(fifo, O_RDONLY); /* waits for a writer */
    CHECK_GE(fd, 0);
    CHECK_EQ(read(fd, got, 5), 5);
    CHECK_EQ(close(fd), 0);
    return NULL;
}

static void *fifo_reader_at(void *arg)
{
    (void)arg;
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK_GE(d, 0);
    int fd = openat(d, "fifo", O_RDONLY);
    CHECK_GE(fd, 0);
    CHECK_EQ(read(fd, got, 5), 5);
    CHECK_EQ(close(fd), 0);
    CHECK_EQ(close(d), 0);
    return NULL;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    CHECK_EQ(mkfifo(fifo, 0600), 0);

    /* The reader opens first: on one worker, had its open blocked the
     * worker, this thread would never run again to open the writer. */
    cap_thread_t r = spawn(fifo_reader, NULL);
    while (!atomic_load(&reader_in))
        cap_yield();
    cap_yield();
    int w = open(fifo, O_WRONLY);
    CHECK_GE(w, 0);
    CHECK_EQ(write(w, "hello", 5), 5);
    join(r);
    CHECK_EQ(memcmp(got, "hello", 5), 0);
    CHECK_EQ(close(w), 0);

    /* The writer first this time, through openat in the reader. */
    memset(got, 0, sizeof got);
    r = spawn(fifo_reader_at, NULL);
    w = open(fifo, O_WRONLY); /* waits for the reader */
    CHECK_GE(w, 0);
    CHECK_EQ(write(w, "again", 5), 5);
    join(r);
    CHECK_EQ(memcmp(got, "again", 5), 0);
    CHECK_EQ(close(w), 0);

    /* Opens that cannot wait. */
    int nb = open(fifo, O_RDONLY | O_NONBLOCK);
    CHECK_GE(nb, 0);
    CHECK_EQ(close(nb), 0);
    CHECK_EQ(open(fifo, O_WRONLY | O_NONBLOCK), -1);
    CHECK_EQ(errno, ENXIO);
    char missing[80];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    CHECK_EQ(open(missing, O_RDONLY), -1);
    CHECK_EQ(errno, ENOENT);
    int f = open(file, O_CREAT | O_RDWR | O_TRUNC, 0600);
    CHECK_GE(f, 0);
    CHECK_EQ(write(f, "data", 4), 4);
    CHECK_EQ(close(f), 0);
    f = open(file, O_RDONLY);
    CHECK_GE(f, 0);
    char buf[4];
    CHECK_EQ(read(f, buf, 4), 4);
    CHECK_EQ(memcmp(buf, "data", 4), 0);
    CHECK_EQ(close(f), 0);

    CHECK_EQ(unlink(fifo), 0);
    CHECK_EQ(unlink(file), 0);
    CHECK_EQ(rmdir(dir), 0);
    return 0;
}

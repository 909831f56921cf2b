/* SPDX-License-Identifier: MIT */
/* Description: blocking writes to a FIFO the runtime does not own (both
 * ends opened past it by raw system calls, as inherited ones are) never
 * hold a worker when another writer takes the room readiness promised.
 * WRITERS user threads share the write end and write RECORDS records of
 * PIPE_BUF bytes each (the kernel writes such a record whole) while one
 * user thread reads them slowly, so the FIFO is full most of the time;
 * every record must arrive whole, each writer's in order. The library
 * before wrote a record after readiness with the plain call, which
 * waited in the kernel when a writer of another worker had taken the one
 * free page: that worker's kernel thread was held there, and with the
 * reader on it, for good (the test's timeout). Once the program closes
 * the write end, the reader sees the end of the FIFO: no description of
 * the runtime's keeps a writer open. */
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/io_util.h"

enum { WRITERS = 4, RECORDS = 5000 };

struct record {
    int writer, seq;
    unsigned char fill[PIPE_BUF - 2 * sizeof(int)];
};

static int rd_fd, wr_fd;
static int next_seq[WRITERS]; /* the reader's */

static unsigned char fill_of(int writer, int seq)
{
    return (unsigned char)(writer * 31 + seq);
}

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct record *r = malloc(sizeof *r); /* off the thread's small stack */
    CHECK(r != NULL);
    for (int i = 0; i < RECORDS; i++) {
        r->writer = w;
        r->seq = i;
        memset(r->fill, fill_of(w, i), sizeof r->fill);
        CHECK_EQ(write(wr_fd, r, sizeof *r), (ssize_t)sizeof *r);
    }
    free(r);
    return NULL;
}

/* Checks one whole record: each writer's come in order. */
static void check_record(const struct record *r)
{
    CHECK(r->writer >= 0 && r->writer < WRITERS);
    CHECK_EQ(r->seq, next_seq[r->writer]);
    next_seq[r->writer]++;
    for (size_t k = 0; k < sizeof r->fill; k++)
        CHECK_EQ(r->fill[k], fill_of(r->writer, r->seq));
}

/* Reads every record, whole (a blocking read of PIPE_BUF bytes may return
 * a part; the rest follows before any other record's bytes, which are
 * not interleaved with it). Slowly: yields between records. */
static void *reader(void *arg)
{
    (void)arg;
    struct record *r = malloc(sizeof *r);
    CHECK(r != NULL);
    for (int i = 0; i < WRITERS * RECORDS; i++) {
        read_exactly_n(rd_fd, (char *)r, sizeof *r, sizeof *r);
        check_record(r);
        for (int k = 0; k < 8; k++)
            cap_yield();
    }
    free(r);
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/cap-fifo-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK_EQ(mkfifo(path, 0600), 0);
    /* Past the runtime: the reader opened non-blocking (no writer yet),
     * then made blocking; the writer blocking. */
    rd_fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    CHECK_GE(rd_fd, 0);
    CHECK_EQ(syscall(SYS_fcntl, rd_fd, F_SETFL, 0), 0);
    wr_fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
    CHECK_GE(wr_fd, 0);

    cap_thread_t w[WRITERS];
    cap_thread_t r = spawn(reader, NULL);
    for (int i = 0; i < WRITERS; i++)
        w[i] = spawn(writer, (void *)(intptr_t)i);
    for (int i = 0; i < WRITERS; i++)
        join(w[i]);
    join(r);
    for (int i = 0; i < WRITERS; i++)
        CHECK_EQ(next_seq[i], RECORDS);

    /* The write end closed: the reader sees the end of the FIFO. */
    CHECK_EQ(close(wr_fd), 0);
    char c;
    CHECK_EQ(read(rd_fd, &c, 1), 0);
    CHECK_EQ(close(rd_fd), 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(rmdir(dir), 0);
    return 0;
}

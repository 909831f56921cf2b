/* SPDX-License-Identifier: MIT */
/* Description: fopen() of a FIFO, which waits in the kernel until the
 * other end is opened, parks only the calling user thread: on one worker
 * the thread that opens the other end (with fopen too) runs meanwhile,
 * and the line it writes arrives; freopen onto the FIFO waits for its
 * writer the same way (and writes out what the old stream buffered
 * first). The stream has the mode's flags ("re":
 * close-on-exec; "a+": read and write); a bad mode fails with EINVAL and
 * a missing path with ENOENT (glibc's fopen, as before); a regular file
 * opens as usual. */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "io/io_util.h"

static char fifo[32];
static atomic_int reader_in;
static char line[16];

static void *fifo_reader(void *arg)
{
    (void)arg;
    atomic_store(&reader_in, 1);
    FILE *in = fopen(fifo, "re"); /* waits for a writer */
    CHECK(in != NULL);
    int fl = fcntl(fileno(in), F_GETFD);
    CHECK(fl >= 0 && (fl & FD_CLOEXEC));
    CHECK(fgets(line, sizeof line, in) == line);
    CHECK(fgets(line + 8, 8, in) == NULL); /* the writer closed: EOF */
    CHECK(feof(in));
    CHECK_EQ(fclose(in), 0);
    return NULL;
}

static void *late_writer(void *arg)
{
    (void)arg;
    cap_usleep(5000); /* the reader is in its freopen by now */
    FILE *out = fopen(fifo, "w");
    CHECK(out != NULL);
    CHECK_EQ(fputs("again\n", out), 1);
    CHECK_EQ(fclose(out), 0);
    return NULL;
}

int main(void)
{
    temp_fifo(fifo);
    atomic_store(&reader_in, 0);
    cap_thread_t t = spawn(fifo_reader, NULL);
    while (!atomic_load(&reader_in))
        cap_yield();
    cap_usleep(5000); /* the reader is in its fopen by now */
    FILE *out = fopen(fifo, "w");
    CHECK(out != NULL);
    int fl = fcntl(fileno(out), F_GETFD);
    CHECK(fl >= 0 && !(fl & FD_CLOEXEC));
    CHECK_EQ(fputs("through\n", out), 1);
    CHECK_EQ(fclose(out), 0);
    join(t);
    CHECK_EQ(strcmp(line, "through\n"), 0);

    /* "a+" of a FIFO opens both ends at once (Linux): no wait. */
    FILE *both = fopen(fifo, "a+");
    CHECK(both != NULL);
    CHECK_EQ(fcntl(fileno(both), F_GETFL) & O_ACCMODE, O_RDWR);
    CHECK_EQ(fputs("loop\n", both), 1);
    CHECK_EQ(fflush(both), 0);
    char buf[8];
    CHECK_EQ(read(fileno(both), buf, sizeof buf), 5);
    CHECK_EQ(memcmp(buf, "loop\n", 5), 0);
    CHECK_EQ(fclose(both), 0);

    /* freopen onto the FIFO waits for its writer the same way, which a
     * thread of this worker opens later. */
    FILE *re = fopen("/dev/null", "r");
    CHECK(re != NULL);
    t = spawn(late_writer, NULL);
    CHECK(freopen(fifo, "r", re) == re);
    char again[16];
    CHECK(fgets(again, sizeof again, re) == again);
    CHECK_EQ(strcmp(again, "again\n"), 0);
    CHECK(fgets(again, sizeof again, re) == NULL); /* the writer closed: EOF */
    CHECK_EQ(fclose(re), 0);
    join(t);

    /* freopen writes out what the old stream buffered, then closes it. */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    FILE *w = fdopen(p[1], "w");
    CHECK(w != NULL);
    CHECK_EQ(fputs("kept\n", w), 1);
    CHECK(freopen("/dev/null", "w", w) == w);
    CHECK_EQ(read(p[0], again, sizeof again), 5);
    CHECK_EQ(memcmp(again, "kept\n", 5), 0);
    CHECK_EQ(read(p[0], again, sizeof again), 0); /* its old descriptor closed */
    CHECK_EQ(fputs("gone\n", w), 1);
    CHECK_EQ(fclose(w), 0);
    CHECK_EQ(close(p[0]), 0);

    errno = 0;
    CHECK(fopen(fifo, "z") == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(fopen("/nonexistent-dir-cap/x", "r") == NULL);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(unlink(fifo), 0);

    char file[] = "/tmp/capriccio-fopen-XXXXXX";
    int fd = mkstemp(file);
    CHECK_GE(fd, 0);
    CHECK_EQ(close(fd), 0);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    CHECK_EQ(fputs("file\n", f), 1);
    CHECK_EQ(fclose(f), 0);
    f = fopen(file, "r");
    CHECK(f != NULL);
    CHECK(fgets(buf, sizeof buf, f) == buf);
    CHECK_EQ(strcmp(buf, "file\n"), 0);
    CHECK_EQ(fclose(f), 0);
    CHECK_EQ(unlink(file), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: fseek and rewind on a stream over a pipe write out its
 * buffered output first, as glibc's do, but parking the caller rather
 * than blocking its worker in glibc's own write: with more output
 * buffered than the pipe holds, the reader (a user thread of the same
 * worker on one worker) runs meanwhile and gets every byte; the seek
 * then fails with ESPIPE as on glibc, and the stream has no error. */
#include "io/io_util.h"

enum { CHUNK = 300000 }; /* more than a pipe's 64 KiB */

static int pipefd[2];
static long got;

static void *drain(void *arg)
{
    (void)arg;
    char buf[8192];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            CHECK_EQ(buf[i], 'x');
        got += n;
    }
    CHECK_EQ(n, 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(pipefd), 0);
    cap_thread_t t = spawn(drain, NULL);
    FILE *out = fdopen(pipefd[1], "w");
    CHECK(out != NULL);
    static char big[1 << 20], data[CHUNK];
    CHECK_EQ(setvbuf(out, big, _IOFBF, sizeof big), 0);
    memset(data, 'x', sizeof data);

    CHECK_EQ(fwrite(data, 1, sizeof data, out), sizeof data);
    errno = 0;
    CHECK_EQ(fseek(out, 0, SEEK_CUR), -1);
    CHECK_EQ(errno, ESPIPE);
    CHECK(!ferror(out));

    CHECK_EQ(fwrite(data, 1, sizeof data, out), sizeof data);
    rewind(out); /* (its ESPIPE is not reported) */
    CHECK(!ferror(out));

    CHECK_EQ(fclose(out), 0);
    join(t);
    CHECK_EQ(got, 2L * CHUNK);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a successful printf, and the fclose of a stream with no
 * descriptor, leave errno as it was, as glibc's do: programs report a
 * failed call after logging something else (memcached's "extstore open"
 * perror said "Bad file descriptor" for a missing file). The first output
 * of the process probed a private fmemopen stream, and closing it went
 * through fileno, which sets EBADF for a stream without a descriptor. */
#include "io/io_util.h"

int main(void)
{
    /* stdout to a pipe, so its first output is a plain buffered write */
    int pfd[2];
    CHECK_EQ(pipe(pfd), 0);
    CHECK_EQ(dup2(pfd[1], STDOUT_FILENO), STDOUT_FILENO);
    CHECK_EQ(close(pfd[1]), 0);

    /* the process's first stdio output: nothing before it used a stream */
    CHECK_EQ(open("/nonexistent-capriccio-test/x", O_RDONLY), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(printf("first\n"), 6);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(fflush(stdout), 0);
    CHECK_EQ(errno, ENOENT);

    /* a stream without a descriptor, closed without error */
    char byte = 'x';
    FILE *m = fmemopen(&byte, 1, "r");
    CHECK(m != NULL);
    errno = ENOENT;
    CHECK_EQ(fclose(m), 0);
    CHECK_EQ(errno, ENOENT);

    char *text = NULL;
    size_t len = 0;
    FILE *ms = open_memstream(&text, &len);
    CHECK(ms != NULL);
    CHECK_EQ(fprintf(ms, "abc"), 3);
    errno = ENOENT;
    CHECK_EQ(fclose(ms), 0);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(len, 3);
    free(text);

    char buf[16] = "";
    CHECK_EQ(read(pfd[0], buf, sizeof buf), 6);
    CHECK_EQ(memcmp(buf, "first\n", 6), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: fflush(NULL) on a user thread while a stream over a pipe
 * has output waiting (so the library walks the streams itself) and a
 * cookie stream's write function closes another stream (a log that
 * rotates). The walk must not hold its gate while the program's own
 * write functions run: before, the fclose inside waited for the walk
 * that called it (the deadlock report ended the program with exit 2).
 * With glibc, fflush(NULL) returns 0 and everything is written. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/io_util.h"

static FILE *rotated;
static int cookie_writes;

static ssize_t log_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    cookie_writes++;
    if (rotated != NULL) {
        CHECK_EQ(fclose(rotated), 0);
        rotated = NULL;
    }
    return (ssize_t)n;
}

int main(void)
{
    for (int round = 0; round < 20; round++) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        FILE *pw = fdopen(p[1], "w");
        CHECK(pw != NULL);
        CHECK_GE(fprintf(pw, "to the pipe %d\n", round), 0); /* waiting in its buffer */
        rotated = fopen("/dev/null", "w");
        CHECK(rotated != NULL);
        CHECK_GE(fputs("pending", rotated), 0);
        cookie_io_functions_t io = { .write = log_write };
        FILE *log = fopencookie(NULL, "w", io);
        CHECK(log != NULL);
        CHECK_GE(fputs("pending in the cookie stream\n", log), 0);
        cookie_writes = 0;
        CHECK_EQ(fflush(NULL), 0);
        CHECK_EQ(cookie_writes, 1);
        CHECK(rotated == NULL);
        char buf[64] = { 0 };
        CHECK_GT(read(p[0], buf, sizeof buf - 1), 0);
        char want[64];
        snprintf(want, sizeof want, "to the pipe %d\n", round);
        CHECK_EQ(strcmp(buf, want), 0);
        CHECK_EQ(fclose(log), 0);
        CHECK_EQ(fclose(pw), 0);
        CHECK_EQ(close(p[0]), 0);
    }
    return 0;
}

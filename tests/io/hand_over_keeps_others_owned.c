/* SPDX-License-Identifier: MIT */
/* Description: giving one descriptor back to blocking mode for code the
 * wrappers do not see (fdopen, and fopen of a FIFO, which opens through
 * the wrappers and then fdopens) gives back only that file when it is a
 * FIFO or an eventfd: a pipe the library made, an eventfd and another
 * FIFO stay non-blocking underneath (their fast paths; read from
 * /proc/self/fdinfo), while the stream's own descriptor is blocking, as
 * glibc's stdio needs. Each FIFO the wrappers open is given back alone;
 * before, the first one took every pipe, FIFO and eventfd of the process
 * with it. A pipe given to fdopen still gives back every pipe (its
 * other end's users included), as before. */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "io/io_util.h"

/* The kernel's file flags of fd (not the application's view). */
static long kernel_flags(int fd)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    long flags = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "flags: %lo", &flags) == 1)
            break;
    CHECK_EQ(fclose(f), 0);
    CHECK(flags >= 0);
    return flags;
}

static void *body(void *arg)
{
    (void)arg;
    int p[2];
    CHECK_EQ(pipe(p), 0);
    int e = eventfd(0, 0);
    CHECK(e >= 0);
    char fifo[2][40];
    int held[2];
    for (int i = 0; i < 2; i++) {
        snprintf(fifo[i], sizeof fifo[i], "/tmp/cap-handover-%d-%d", (int)getpid(), i);
        unlink(fifo[i]);
        CHECK_EQ(mkfifo(fifo[i], 0600), 0);
        held[i] = open(fifo[i], O_RDWR); /* owned; the fopen below then does not wait */
        CHECK(held[i] >= 0);
        CHECK(kernel_flags(held[i]) & O_NONBLOCK);
    }
    CHECK(kernel_flags(p[0]) & O_NONBLOCK);
    CHECK(kernel_flags(e) & O_NONBLOCK);

    FILE *in = fopen(fifo[0], "r"); /* through the open wrapper, then fdopen */
    CHECK(in != NULL);
    CHECK_EQ(kernel_flags(fileno(in)) & O_NONBLOCK, 0); /* glibc's stdio: blocking */
    CHECK(kernel_flags(p[0]) & O_NONBLOCK);
    CHECK(kernel_flags(p[1]) & O_NONBLOCK);
    CHECK(kernel_flags(e) & O_NONBLOCK);
    CHECK(kernel_flags(held[1]) & O_NONBLOCK);

    FILE *ev = fdopen(dup(e), "r"); /* an eventfd's file and its numbers */
    CHECK(ev != NULL);
    CHECK_EQ(kernel_flags(e) & O_NONBLOCK, 0);
    CHECK(kernel_flags(p[0]) & O_NONBLOCK);
    CHECK(kernel_flags(held[1]) & O_NONBLOCK);

    FILE *pf = fdopen(p[0], "r"); /* a pipe: every pipe, as before */
    CHECK(pf != NULL);
    CHECK_EQ(kernel_flags(p[1]) & O_NONBLOCK, 0);

    CHECK_EQ(fclose(in), 0);
    CHECK_EQ(fclose(ev), 0);
    CHECK_EQ(fclose(pf), 0);
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ(close(e), 0);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(close(held[i]), 0);
        CHECK_EQ(unlink(fifo[i]), 0);
    }
    return NULL;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, body, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    return 0;
}

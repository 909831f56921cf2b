/* SPDX-License-Identifier: MIT */
/* Description: one call on a line-buffered stream writes out up to its
 * last newline and keeps the rest buffered; another thread's call that
 * comes while the first waits in its write (the pipe is full) puts its
 * bytes after that rest, as after glibc's whole call: "...\ndefxyz". The
 * rest went into the buffer only after the write, so the other call's
 * "xyz" came first: "...\nxyzdef" (every run on one worker). */
#include <sys/ioctl.h>

#include "io/io_util.h"

enum { BIG = 200000, PIPE_FULL = 65536 };

static FILE *f;
static int pfd[2];
static atomic_int b_done;
static char out[BIG + 64];
static size_t got;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&b_done))
        cap_sleep_ns(1000000);
    ssize_t r;
    while ((r = read(pfd[0], out + got, sizeof out - got)) > 0)
        got += (size_t)r;
    CHECK_EQ(r, 0);
    return NULL;
}

static void *writer_a(void *arg)
{
    (void)arg;
    char *s = malloc(BIG + 5);
    CHECK(s != NULL);
    memset(s, 'a', BIG);
    memcpy(s + BIG, "\ndef", 5);
    CHECK_GE(fputs(s, f), 0); /* writes "aaa...\n", waiting for the reader; keeps "def" */
    free(s);
    return NULL;
}

static void *writer_b(void *arg)
{
    (void)arg;
    int queued = 0;
    while (queued < PIPE_FULL) { /* the pipe is full: A waits in its write */
        cap_sleep_ns(1000000);
        CHECK_EQ(ioctl(pfd[0], FIONREAD, &queued), 0);
    }
    CHECK_GE(fputs("xyz", f), 0);
    atomic_store(&b_done, 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(pfd), 0);
    CHECK_EQ(fcntl(pfd[0], F_GETPIPE_SZ), PIPE_FULL);
    f = fdopen(pfd[1], "w");
    CHECK(f != NULL);
    CHECK_EQ(setvbuf(f, NULL, _IOLBF, BUFSIZ), 0);
    cap_thread_t r = spawn(reader, NULL);
    cap_thread_t a = spawn(writer_a, NULL);
    cap_thread_t b = spawn(writer_b, NULL);
    join(a);
    join(b);
    CHECK_EQ(fclose(f), 0);
    join(r);
    CHECK_EQ(got, BIG + 7);
    CHECK_EQ(memcmp(out + got - 7, "\ndefxyz", 7), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: fflush(NULL) on a user thread while a stream over a pipe
 * has output waiting (so the library walks the streams itself) and a
 * cookie stream's write function closes another stream (a log that
 * rotates). The walk must not hold its gate while the program's own
 * write functions run: before, the fclose inside waited for the walk
 * that called it (the deadlock report ended the program with exit 2).
 * With glibc, fflush(NULL) returns 0 and everything is written.
 * Also: a cookie stream whose write parks (a full pipe) while another
 * user thread closes it: the close waits for the walk (glibc's flush of
 * all had run the write under glibc's locks, which the closing thread of
 * the same worker walked into, and freed the stream under it); and a
 * walk ended by a cancel gives its gate back (fopen and fclose went on
 * waiting for it: a deadlock report). */
#include <fcntl.h>
#include <stdatomic.h>
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

/* ---- a cookie write that parks while another thread closes the stream */

static int full_pipe[2];
static FILE *cookie_stream;
static atomic_int closed_while_flushing, cookie_in_write;

static ssize_t parking_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    atomic_store(&cookie_in_write, 1);
    char big[8192];
    memset(big, 'y', sizeof big);
    CHECK_EQ(write(full_pipe[1], big, sizeof big), (ssize_t)sizeof big); /* parks */
    atomic_store(&cookie_in_write, 2); /* done */
    return (ssize_t)n;
}

static int noting_close(void *cookie)
{
    (void)cookie;
    if (atomic_load(&cookie_in_write) == 1) /* the write still under way */
        atomic_store(&closed_while_flushing, 1);
    return 0;
}

static void *flushes_all(void *arg)
{
    (void)arg;
    CHECK_EQ(fflush(NULL), 0);
    return NULL;
}

static void *closes_cookie(void *arg)
{
    (void)arg;
    while (!atomic_load(&cookie_in_write))
        cap_yield();
    CHECK_EQ(fclose(cookie_stream), 0); /* waits for the walk */
    return NULL;
}

static void *drains_late(void *arg)
{
    (void)arg;
    usleep(50000);
    char buf[65536];
    size_t total = 0;
    while (total < 65536 + 8192) {
        ssize_t n = read(full_pipe[0], buf, sizeof buf);
        CHECK_GT(n, 0);
        total += (size_t)n;
    }
    return NULL;
}

static void fill(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    CHECK_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
    char b[4096];
    memset(b, 'z', sizeof b);
    while (write(fd, b, sizeof b) > 0)
        ;
    CHECK_EQ(fcntl(fd, F_SETFL, fl), 0);
}

static void cookie_closed_during_walk(void)
{
    CHECK_EQ(pipe(full_pipe), 0);
    fill(full_pipe[1]);
    atomic_store(&cookie_in_write, 0);
    atomic_store(&closed_while_flushing, 0);
    cookie_io_functions_t io = { .write = parking_write, .close = noting_close };
    cookie_stream = fopencookie(NULL, "w", io);
    CHECK(cookie_stream != NULL);
    CHECK_GE(fputs("x", cookie_stream), 0);
    cap_thread_t a = spawn(flushes_all, NULL);
    cap_thread_t b = spawn(closes_cookie, NULL);
    cap_thread_t r = spawn(drains_late, NULL);
    join(a);
    join(b);
    join(r);
    CHECK_EQ(atomic_load(&closed_while_flushing), 0);
    CHECK_EQ(close(full_pipe[0]), 0);
    CHECK_EQ(close(full_pipe[1]), 0);
}

/* ---- a walk ended by a cancel ------------------------------------------ */

static FILE *pending_pipe_stream;

static void *flushes_into_full_pipe(void *arg)
{
    (void)arg;
    CHECK_GE(fputs("pending\n", pending_pipe_stream), 0);
    fflush(NULL); /* parks: the pipe is full; cancelled there */
    CHECK(!"not cancelled");
    return NULL;
}

static void walk_cancelled(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    pending_pipe_stream = fdopen(p[1], "w");
    CHECK(pending_pipe_stream != NULL);
    fill(p[1]);
    cap_thread_t a = spawn(flushes_into_full_pipe, NULL);
    cap_sleep_ns(20000000);
    CHECK_EQ(cap_thread_cancel(a), 0);
    CHECK(join(a) == CAP_CANCELED);
    FILE *f = fopen("/dev/null", "w"); /* the walk's gate was given back */
    CHECK(f != NULL);
    CHECK_EQ(fclose(f), 0);
    CHECK_EQ(close(p[0]), 0);
    fclose(pending_pipe_stream); /* its bytes have no reader: EOF or 0 */
}

int main(void)
{
    for (int round = 0; round < 3; round++) {
        cookie_closed_during_walk();
        walk_cancelled();
    }
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

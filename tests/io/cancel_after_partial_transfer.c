/* SPDX-License-Identifier: MIT */
/* Description: a cancel that reaches a thread parked in a call that has
 * already moved data does not lose the data: a blocking write of 1 MiB
 * into a pipe that took only its capacity, and a recv(MSG_WAITALL) of 100
 * bytes that got 10, return the partial count, and the request acts at
 * the next cancellation point (cap_testcancel). What the reader finds in
 * the pipe is exactly what write reported. The same for a blocking write
 * of 1 MiB on a stream socket (the direct path of intercept/rw.c, which
 * hands a partial write over to the general one). */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

enum { BIG = 1 << 20 };
static char big[BIG];
static int rd, wr, sv[2];
static long result = -2;
static atomic_int cleaned;

static void note(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *writer(void *arg)
{
    (void)arg;
    cap_cleanup_push(note, NULL);
    result = write(wr, big, BIG);
    cap_testcancel();
    cap_cleanup_pop(0);
    return NULL;
}

static void *sock_writer(void *arg)
{
    (void)arg;
    cap_cleanup_push(note, NULL);
    result = write(sv[0], big, BIG);
    cap_testcancel();
    cap_cleanup_pop(0);
    return NULL;
}

static void *receiver(void *arg)
{
    (void)arg;
    cap_cleanup_push(note, NULL);
    result = recv(sv[0], big, 100, MSG_WAITALL);
    cap_testcancel();
    cap_cleanup_pop(0);
    return NULL;
}

static int readable(int fd)
{
    int n = -1;
    CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
    return n;
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rd = p[0];
    wr = p[1];
    int cap = fcntl(wr, F_GETPIPE_SZ);
    CHECK_GT(cap, 0);
    CHECK_LT(cap, BIG);

    cap_thread_t t = spawn(writer, NULL);
    while (readable(rd) < cap) /* the writer filled the pipe, then parked */
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_thread_cancel(t), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&cleaned), 1);
    fprintf(stderr, "write returned %ld of %d, pipe holds %d\n", result, BIG, readable(rd));
    CHECK_EQ(result, cap);
    long total = 0, r;
    CHECK_EQ(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
    while ((r = read(rd, big, BIG)) > 0)
        total += r;
    CHECK_EQ(total, cap);

    result = -2;
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    t = spawn(receiver, NULL);
    CHECK_EQ(send(sv[1], "0123456789", 10, 0), 10);
    while (readable(sv[0]) > 0) /* the receiver took the 10 bytes */
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_thread_cancel(t), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&cleaned), 2);
    CHECK_EQ(result, 10);

    /* The socket write: whatever it reports is exactly what arrived. */
    result = -2;
    close(sv[0]);
    close(sv[1]);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    t = spawn(sock_writer, NULL);
    while (readable(sv[1]) <= 0) /* the writer moved some of it */
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_thread_cancel(t), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&cleaned), 3);
    CHECK_GT(result, 0);
    CHECK_LT(result, BIG);
    total = 0;
    CHECK_EQ(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    while ((r = read(sv[1], big, BIG)) > 0)
        total += r;
    CHECK_EQ(total, result);
    return 0;
}

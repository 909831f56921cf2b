/* SPDX-License-Identifier: MIT */
/* Description: splice, tee and vmsplice from threads answer as on glibc
 * and Linux:
 *  - a splice from a socket waits for its data, one into a full pipe for
 *    room, one from an empty pipe into a socket for data; a tee waits for
 *    data and leaves it in its source; vmsplice waits for room in a full
 *    pipe and for data in an empty one;
 *  - SPLICE_F_NONBLOCK, or O_NONBLOCK set by the program on the pipe or
 *    the socket, makes them say EAGAIN instead (vmsplice: only the flag);
 *  - end of input is 0, a pipe without readers EPIPE (SIGPIPE ignored);
 *    two non-pipes EINVAL, an offset on a pipe ESPIPE, a bad number
 *    EBADF;
 *  - file to pipe and pipe to file at offsets, which move and leave the
 *    file position alone;
 *  - a caught signal (no SA_RESTART) ends a waiting splice with EINTR,
 *    and a cancel ends a thread waiting in one;
 *  - two relay threads copy 1 MiB each way between socket pairs through
 *    pipes (socket -> pipe -> socket), byte for byte.
 * Every wait here depends on another thread, so a call that held up the
 * threads beside it never ends (the alarm fails the program). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Writes `text` to fd after a pause, from its own thread. */
struct later {
    int fd;
    const char *text;
    pthread_t thread;
};

static void *write_later(void *arg)
{
    struct later *l = arg;
    sleep_ms(50);
    EXPECT_EQ(write(l->fd, l->text, strlen(l->text)), (long)strlen(l->text));
    return NULL;
}

static void start_later(struct later *l, int fd, const char *text)
{
    l->fd = fd;
    l->text = text;
    EXPECT_EQ(pthread_create(&l->thread, NULL, write_later, l), 0);
}

static void finish_later(struct later *l)
{
    EXPECT_EQ(pthread_join(l->thread, NULL), 0);
}

static void read_exactly(int fd, const char *want)
{
    char buf[64] = { 0 };
    size_t n = strlen(want), have = 0;
    while (have < n) {
        long r = read(fd, buf + have, n - have);
        EXPECT(r > 0);
        have += (size_t)r;
    }
    EXPECT_EQ(memcmp(buf, want, n), 0);
}

static int fill_pipe(int wfd)
{
    int flags = fcntl(wfd, F_GETFL);
    EXPECT_EQ(fcntl(wfd, F_SETFL, flags | O_NONBLOCK), 0);
    static char chunk[4096];
    int total = 0;
    long r;
    while ((r = write(wfd, chunk, sizeof chunk)) > 0)
        total += (int)r;
    EXPECT_EQ(fcntl(wfd, F_SETFL, flags), 0);
    return total;
}

struct drain {
    int fd, bytes;
    pthread_t thread;
};

static void *drain_later(void *arg)
{
    struct drain *d = arg;
    sleep_ms(50);
    char buf[4096];
    for (int left = d->bytes; left > 0;) {
        long r = read(d->fd, buf, left < (int)sizeof buf ? (size_t)left : sizeof buf);
        EXPECT(r > 0);
        left -= (int)r;
    }
    return NULL;
}

static void waits(void)
{
    int sp[2], p[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    EXPECT_EQ(pipe(p), 0);
    struct later l;

    start_later(&l, sp[1], "hello"); /* socket -> pipe: waits for data */
    EXPECT_EQ(splice(sp[0], NULL, p[1], NULL, 100, 0), 5);
    finish_later(&l);
    read_exactly(p[0], "hello");

    start_later(&l, p[1], "world"); /* pipe -> socket: waits for data */
    EXPECT_EQ(splice(p[0], NULL, sp[1], NULL, 100, 0), 5);
    finish_later(&l);
    read_exactly(sp[0], "world");

    int full = fill_pipe(p[1]); /* socket -> full pipe: waits for room */
    EXPECT_EQ(write(sp[1], "more", 4), 4);
    struct drain d = { .fd = p[0], .bytes = full };
    EXPECT_EQ(pthread_create(&d.thread, NULL, drain_later, &d), 0);
    EXPECT_EQ(splice(sp[0], NULL, p[1], NULL, 4, 0), 4);
    EXPECT_EQ(pthread_join(d.thread, NULL), 0);
    read_exactly(p[0], "more");

    int q[2];
    EXPECT_EQ(pipe(q), 0);
    start_later(&l, p[1], "copy"); /* tee: waits, and the source keeps it */
    EXPECT_EQ(tee(p[0], q[1], 100, 0), 4);
    finish_later(&l);
    read_exactly(q[0], "copy");
    read_exactly(p[0], "copy");

    full = fill_pipe(q[1]); /* vmsplice into a full pipe: waits for room */
    struct iovec v = { (void *)"gift", 4 };
    d = (struct drain){ .fd = q[0], .bytes = full };
    EXPECT_EQ(pthread_create(&d.thread, NULL, drain_later, &d), 0);
    EXPECT_EQ(vmsplice(q[1], &v, 1, 0), 4);
    EXPECT_EQ(pthread_join(d.thread, NULL), 0);
    read_exactly(q[0], "gift");

    char got[8] = { 0 }; /* vmsplice out of an empty pipe: waits for data */
    struct iovec out = { got, 4 };
    start_later(&l, q[1], "back");
    EXPECT_EQ(vmsplice(q[0], &out, 1, 0), 4);
    finish_later(&l);
    EXPECT_EQ(memcmp(got, "back", 4), 0);

    close(sp[0]);
    close(sp[1]);
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
}

static void not_waiting(void)
{
    int sp[2], p[2], q[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    EXPECT_EQ(pipe(p), 0);
    EXPECT_EQ(pipe(q), 0);
    errno = 0;
    expect_fail(splice(sp[0], NULL, p[1], NULL, 10, SPLICE_F_NONBLOCK), EAGAIN);
    expect_fail(splice(p[0], NULL, q[1], NULL, 10, SPLICE_F_NONBLOCK), EAGAIN);
    expect_fail(tee(p[0], q[1], 10, SPLICE_F_NONBLOCK), EAGAIN);
    char buf[4];
    struct iovec v = { buf, sizeof buf };
    expect_fail(vmsplice(p[0], &v, 1, SPLICE_F_NONBLOCK), EAGAIN);

    EXPECT_EQ(fcntl(p[1], F_SETFL, O_NONBLOCK), 0); /* the pipe's own flag */
    expect_fail(splice(sp[0], NULL, p[1], NULL, 10, 0), EAGAIN);
    EXPECT_EQ(fcntl(p[1], F_SETFL, 0), 0);
    EXPECT_EQ(fcntl(sp[0], F_SETFL, O_NONBLOCK), 0); /* the socket's */
    expect_fail(splice(sp[0], NULL, p[1], NULL, 10, 0), EAGAIN);
    EXPECT_EQ(fcntl(sp[0], F_SETFL, 0), 0);
    EXPECT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0); /* either pipe of two */
    expect_fail(splice(p[0], NULL, q[1], NULL, 10, 0), EAGAIN);
    expect_fail(tee(p[0], q[1], 10, 0), EAGAIN);
    EXPECT_EQ(fcntl(p[0], F_SETFL, 0), 0);

    EXPECT_EQ(close(p[1]), 0); /* end of input */
    EXPECT_EQ(splice(p[0], NULL, q[1], NULL, 10, 0), 0);
    EXPECT_EQ(close(q[0]), 0); /* no reader */
    EXPECT_EQ(write(sp[1], "x", 1), 1);
    signal(SIGPIPE, SIG_IGN);
    expect_fail(splice(sp[0], NULL, q[1], NULL, 10, 0), EPIPE);

    int r[2];
    EXPECT_EQ(pipe(r), 0);
    expect_fail(splice(sp[0], NULL, sp[1], NULL, 10, 0), EINVAL); /* no pipe */
    loff_t off = 0;
    expect_fail(splice(r[0], &off, sp[1], NULL, 10, 0), ESPIPE);
    expect_fail(splice(-1, NULL, r[1], NULL, 10, 0), EBADF);
    EXPECT_EQ(splice(sp[0], NULL, r[1], NULL, 0, 0), 0); /* nothing asked */
    close(sp[0]);
    close(sp[1]);
    close(p[0]);
    close(q[1]);
    close(r[0]);
    close(r[1]);
}

static void files(void)
{
    char path[] = "/tmp/compat_splice_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    EXPECT_EQ(unlink(path), 0);
    EXPECT_EQ(write(fd, "0123456789", 10), 10);
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    loff_t off = 2;
    EXPECT_EQ(splice(fd, &off, p[1], NULL, 5, 0), 5);
    EXPECT_EQ(off, 7);
    EXPECT_EQ(lseek(fd, 0, SEEK_CUR), 10); /* the position stays */
    read_exactly(p[0], "23456");
    EXPECT_EQ(write(p[1], "ab", 2), 2);
    off = 8;
    EXPECT_EQ(splice(p[0], NULL, fd, &off, 2, 0), 2);
    EXPECT_EQ(off, 10);
    char buf[10];
    EXPECT_EQ(pread(fd, buf, 10, 0), 10);
    EXPECT_EQ(memcmp(buf, "01234567ab", 10), 0);
    close(p[0]);
    close(p[1]);
    close(fd);
}

static void on_signal(int sig)
{
    (void)sig;
}

struct blocked {
    int in, out;
    volatile int waiting;
    long result;
    int err;
};

static void *splicer(void *arg)
{
    struct blocked *b = arg;
    b->waiting = 1;
    b->result = splice(b->in, NULL, b->out, NULL, 10, 0);
    b->err = errno;
    return NULL;
}

static void interrupted(void)
{
    install_handler(SIGUSR1, on_signal, 0);
    int sp[2], p[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    EXPECT_EQ(pipe(p), 0);
    struct blocked b = { .in = sp[0], .out = p[1] };
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, splicer, &b), 0);
    while (!b.waiting)
        sleep_ms(1);
    sleep_ms(50);
    EXPECT_EQ(pthread_kill(th, SIGUSR1), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    EXPECT_EQ(b.result, -1);
    EXPECT_EQ(b.err, EINTR);

    b = (struct blocked){ .in = sp[0], .out = p[1] };
    EXPECT_EQ(pthread_create(&th, NULL, splicer, &b), 0);
    while (!b.waiting)
        sleep_ms(1);
    sleep_ms(50);
    EXPECT_EQ(pthread_cancel(th), 0);
    void *ret = NULL;
    EXPECT_EQ(pthread_join(th, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    close(sp[0]);
    close(sp[1]);
    close(p[0]);
    close(p[1]);
}

enum { RELAY_BYTES = 1 << 20 };

/* Copies RELAY_BYTES from `from` to `to` through a pipe of its own. */
struct relay {
    int from, to;
    pthread_t thread;
};

static void *relay(void *arg)
{
    struct relay *r = arg;
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    for (long moved = 0; moved < RELAY_BYTES;) {
        long in = splice(r->from, NULL, p[1], NULL, 65536, SPLICE_F_MOVE);
        EXPECT(in > 0);
        for (long out = 0; out < in;) {
            long n = splice(p[0], NULL, r->to, NULL, (size_t)(in - out), SPLICE_F_MOVE);
            EXPECT(n > 0);
            out += n;
        }
        moved += in;
    }
    close(p[0]);
    close(p[1]);
    return NULL;
}

struct endpoint {
    int fd;
    unsigned seed;
    pthread_t thread;
};

static void *send_pattern(void *arg)
{
    struct endpoint *e = arg;
    char buf[8192];
    unsigned x = e->seed;
    for (long sent = 0; sent < RELAY_BYTES; sent += (long)sizeof buf) {
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (char)(x = x * 1103515245u + 12345u);
        for (size_t off = 0; off < sizeof buf;) {
            long n = write(e->fd, buf + off, sizeof buf - off);
            EXPECT(n > 0);
            off += (size_t)n;
        }
    }
    return NULL;
}

static void *check_pattern(void *arg)
{
    struct endpoint *e = arg;
    unsigned x = e->seed;
    char buf[8192];
    for (long got = 0; got < RELAY_BYTES;) {
        long n = read(e->fd, buf, sizeof buf);
        EXPECT(n > 0);
        for (long i = 0; i < n; i++)
            EXPECT_EQ(buf[i], (char)(x = x * 1103515245u + 12345u));
        got += n;
    }
    return NULL;
}

static void relays(void)
{
    /* a[1] -> relay -> b[0] and c[1] -> relay -> d[0] */
    int a[2], b[2], c[2], d[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, d), 0);
    struct relay r1 = { .from = a[0], .to = b[1] }, r2 = { .from = c[0], .to = d[1] };
    struct endpoint s1 = { .fd = a[1], .seed = 1 }, s2 = { .fd = c[1], .seed = 2 };
    struct endpoint k1 = { .fd = b[0], .seed = 1 }, k2 = { .fd = d[0], .seed = 2 };
    EXPECT_EQ(pthread_create(&r1.thread, NULL, relay, &r1), 0);
    EXPECT_EQ(pthread_create(&r2.thread, NULL, relay, &r2), 0);
    EXPECT_EQ(pthread_create(&k1.thread, NULL, check_pattern, &k1), 0);
    EXPECT_EQ(pthread_create(&k2.thread, NULL, check_pattern, &k2), 0);
    EXPECT_EQ(pthread_create(&s1.thread, NULL, send_pattern, &s1), 0);
    EXPECT_EQ(pthread_create(&s2.thread, NULL, send_pattern, &s2), 0);
    pthread_t all[] = { s1.thread, s2.thread, r1.thread, r2.thread, k1.thread, k2.thread };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        EXPECT_EQ(pthread_join(all[i], NULL), 0);
    int fds[] = { a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        close(fds[i]);
}

int main(void)
{
    alarm(50);
    waits();
    not_waiting();
    files();
    interrupted();
    relays();
    puts("splice_as_glibc: ok");
    return 0;
}

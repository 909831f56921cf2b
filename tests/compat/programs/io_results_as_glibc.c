/* SPDX-License-Identifier: MIT */
/* Description: what blocking-style I/O calls return at their edges, as on
 * glibc and Linux:
 *  - pipes: EAGAIN from an empty pipe the program made non-blocking, EOF
 *    once the writer is closed, EPIPE (SIGPIPE ignored) once the reader
 *    is, FIONREAD, a partial read of what is there;
 *  - poll: POLLNVAL for a closed descriptor, POLLHUP for a pipe whose
 *    writer closed, a timeout with nothing ready (0);
 *  - select writes back the time left (Linux), 0 after a full timeout;
 *    ppoll leaves its timeout alone (glibc copies it);
 *  - sockets: ECONNREFUSED from a port nobody listens on, EINVAL from
 *    accept on a socket that does not listen, ENOTCONN from recv on an
 *    unconnected one; MSG_PEEK then a read; MSG_WAITALL short at EOF;
 *    shutdown(SHUT_WR) seen as EOF by the peer; EPIPE writing to a
 *    socket the peer closed after its reset (ECONNRESET first);
 *  - fcntl reports the O_NONBLOCK the program set, and a dup shares it;
 *  - EBADF from read, write and close of a closed descriptor;
 *  - SO_RCVTIMEO ends a read with EAGAIN. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"

static void pipes(void)
{
    int p[2];
    char buf[16];
    EXPECT_EQ(pipe(p), 0);
    EXPECT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    EXPECT_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    EXPECT_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
    int d = dup(p[0]);
    EXPECT(d >= 0);
    EXPECT_EQ(fcntl(d, F_GETFL) & O_NONBLOCK, O_NONBLOCK); /* one open file */
    EXPECT_EQ(close(d), 0);
    errno = 0;
    expect_fail(read(p[0], buf, sizeof buf), EAGAIN);

    EXPECT_EQ(write(p[1], "abc", 3), 3);
    int avail = -1;
    EXPECT_EQ(ioctl(p[0], FIONREAD, &avail), 0);
    EXPECT_EQ(avail, 3);
    EXPECT_EQ(read(p[0], buf, sizeof buf), 3); /* partial: what is there */
    EXPECT_EQ(memcmp(buf, "abc", 3), 0);

    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    EXPECT_EQ(poll(&pf, 1, 10), 0); /* nothing ready: a timeout */
    EXPECT_EQ(close(p[1]), 0);
    EXPECT_EQ(poll(&pf, 1, 1000), 1);
    EXPECT_EQ(pf.revents & POLLHUP, POLLHUP);
    EXPECT_EQ(read(p[0], buf, sizeof buf), 0); /* EOF */
    EXPECT_EQ(close(p[0]), 0);

    pf.fd = p[0];
    pf.revents = 0;
    EXPECT_EQ(poll(&pf, 1, 0), 1);
    EXPECT_EQ(pf.revents, POLLNVAL);
    errno = 0;
    expect_fail(read(p[0], buf, 1), EBADF);
    errno = 0;
    expect_fail(write(p[0], buf, 1), EBADF);
    errno = 0;
    expect_fail(close(p[0]), EBADF);

    /* EPIPE, SIGPIPE ignored. */
    EXPECT(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    EXPECT_EQ(pipe(p), 0);
    EXPECT_EQ(close(p[0]), 0);
    errno = 0;
    expect_fail(write(p[1], "x", 1), EPIPE);
    EXPECT_EQ(close(p[1]), 0);
}

static void timeouts_written_back(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    struct timeval tv = { 0, 20000 };
    EXPECT_EQ(select(p[0] + 1, &rd, NULL, NULL, &tv), 0);
    EXPECT_EQ(tv.tv_sec, 0);
    EXPECT_EQ(tv.tv_usec, 0); /* Linux writes back the time left */
    EXPECT(!FD_ISSET(p[0], &rd));

    /* Ready before the timeout: some of it left. */
    EXPECT_EQ(write(p[1], "y", 1), 1);
    FD_SET(p[0], &rd);
    tv.tv_sec = 5;
    tv.tv_usec = 0;
    EXPECT_EQ(select(p[0] + 1, &rd, NULL, NULL, &tv), 1);
    EXPECT(FD_ISSET(p[0], &rd));
    EXPECT(tv.tv_sec > 0 && tv.tv_sec <= 5);
    char c;
    EXPECT_EQ(read(p[0], &c, 1), 1);

    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    struct timespec ts = { 0, 20000000 };
    EXPECT_EQ(ppoll(&pf, 1, &ts, NULL), 0);
    EXPECT_EQ(ts.tv_sec, 0);
    EXPECT_EQ(ts.tv_nsec, 20000000); /* glibc passes a copy */
    EXPECT_EQ(close(p[0]), 0);
    EXPECT_EQ(close(p[1]), 0);
}

static int listener(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(s >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    EXPECT_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    EXPECT_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return s;
}

static int connect_to(int port)
{
    int c = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(c >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int r = connect(c, (struct sockaddr *)&a, sizeof a);
    if (r != 0) {
        int e = errno;
        close(c);
        errno = e;
        return -1;
    }
    return c;
}

static void sockets(void)
{
    char buf[64];
    int port;
    int s = listener(&port);
    /* Bound, not listening: connect refused, accept EINVAL. */
    errno = 0;
    EXPECT_EQ(connect_to(port), -1);
    EXPECT_EQ(errno, ECONNREFUSED);
    errno = 0;
    expect_fail(accept(s, NULL, NULL), EINVAL);
    int lone = socket(AF_INET, SOCK_STREAM, 0);
    errno = 0;
    expect_fail(recv(lone, buf, sizeof buf, 0), ENOTCONN);
    EXPECT_EQ(close(lone), 0);

    EXPECT_EQ(listen(s, 8), 0);
    int c = connect_to(port);
    EXPECT(c >= 0);
    int a = accept(s, NULL, NULL);
    EXPECT(a >= 0);

    EXPECT_EQ(send(c, "hello", 5, 0), 5);
    EXPECT_EQ(recv(a, buf, 2, MSG_PEEK), 2);
    EXPECT_EQ(memcmp(buf, "he", 2), 0);
    EXPECT_EQ(recv(a, buf, sizeof buf, 0), 5); /* the peeked bytes too */
    EXPECT_EQ(memcmp(buf, "hello", 5), 0);

    /* MSG_WAITALL ends short at EOF; shutdown(SHUT_WR) is that EOF. */
    EXPECT_EQ(send(c, "abc", 3, 0), 3);
    EXPECT_EQ(shutdown(c, SHUT_WR), 0);
    EXPECT_EQ(recv(a, buf, sizeof buf, MSG_WAITALL), 3);
    EXPECT_EQ(recv(a, buf, sizeof buf, 0), 0);
    /* The other way still works. */
    EXPECT_EQ(send(a, "ok", 2, 0), 2);
    EXPECT_EQ(recv(c, buf, sizeof buf, 0), 2);

    /* SO_RCVTIMEO: EAGAIN when it runs out. */
    struct timeval tv = { 0, 20000 };
    EXPECT_EQ(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    errno = 0;
    expect_fail(recv(c, buf, sizeof buf, 0), EAGAIN);

    /* A reset: the peer closes with data unread. */
    EXPECT_EQ(send(a, "zz", 2, 0), 2);
    EXPECT_EQ(close(c), 0); /* "zz" unread: the close resets */
    struct pollfd pf = { .fd = a, .events = POLLIN };
    EXPECT_EQ(poll(&pf, 1, 5000), 1);
    errno = 0;
    long r = recv(a, buf, sizeof buf, 0);
    EXPECT(r == 0 || (r == -1 && errno == ECONNRESET));
    errno = 0;
    r = send(a, "x", 1, 0);
    if (r == 1) {
        /* The first write after a FIN may still go out: "zz" reached c
         * after its close, which then sent a FIN, not a reset. c answers
         * "x" with one; wait for it (POLLHUP and POLLERR need no events;
         * POLLOUT was ready at once, and a second send could go out before
         * the reset came). */
        errno = 0;
        struct pollfd w = { .fd = a, .events = 0 };
        EXPECT_EQ(poll(&w, 1, 5000), 1);
        EXPECT(w.revents & (POLLHUP | POLLERR));
        r = send(a, "x", 1, 0);
    }
    EXPECT_EQ(r, -1);
    EXPECT(errno == EPIPE || errno == ECONNRESET);
    EXPECT_EQ(close(a), 0);
    EXPECT_EQ(close(s), 0);
}

int main(void)
{
    pipes();
    timeouts_written_back();
    sockets();
    return 0;
}

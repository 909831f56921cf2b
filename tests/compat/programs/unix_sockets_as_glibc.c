/* SPDX-License-Identifier: MIT */
/* Description: Unix-domain sockets used from threads answer as on glibc
 * and Linux:
 *  - datagrams: a blocking recv waits for one; an empty datagram is
 *    received as 0 bytes (not end of input); a short buffer truncates
 *    (recvmsg flags MSG_TRUNC; recv with MSG_TRUNC returns the real
 *    length); MSG_PEEK leaves it; recvfrom names a bound sender;
 *  - seqpacket: record boundaries kept, a blocking recv waits, the peer's
 *    close is end of input (0);
 *  - stream: shutdown(SHUT_WR) is end of input for the peer while the
 *    other direction still works; a blocking send into a full socket
 *    waits for the reader;
 *  - SO_PEERCRED names this process; SCM_RIGHTS passes a pipe whose
 *    received end waits in a blocking read; an abstract-namespace listener takes
 *    a connection a blocked accept returns; ECONNREFUSED for a name
 *    nobody listens on, ENOENT for a missing path.
 * Every wait here depends on another thread, so a call that held up the
 * threads beside it never ends (the alarm fails the program). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

struct later {
    int fd;
    const void *data;
    size_t len;
    pthread_t thread;
};

static void *send_later(void *arg)
{
    struct later *l = arg;
    sleep_ms(50);
    EXPECT_EQ(send(l->fd, l->data, l->len, 0), (long)l->len);
    return NULL;
}

static void start_later(struct later *l, int fd, const void *data, size_t len)
{
    *l = (struct later){ .fd = fd, .data = data, .len = len };
    EXPECT_EQ(pthread_create(&l->thread, NULL, send_later, l), 0);
}

static void finish_later(struct later *l)
{
    EXPECT_EQ(pthread_join(l->thread, NULL), 0);
}

static void datagrams(void)
{
    int s[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, s), 0);
    char buf[64];
    struct later l;
    start_later(&l, s[1], "", 0); /* an empty datagram */
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 0);
    finish_later(&l);

    start_later(&l, s[1], "0123456789", 10);
    EXPECT_EQ(recv(s[0], buf, sizeof buf, MSG_PEEK), 10); /* waits, leaves it */
    finish_later(&l);
    struct iovec v = { buf, 4 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    EXPECT_EQ(recvmsg(s[0], &m, 0), 4); /* truncated */
    EXPECT(m.msg_flags & MSG_TRUNC);
    EXPECT_EQ(memcmp(buf, "0123", 4), 0);
    EXPECT_EQ(send(s[1], "abcdef", 6, 0), 6);
    EXPECT_EQ(recv(s[0], buf, 2, MSG_TRUNC), 6); /* the real length */
    close(s[0]);
    close(s[1]);

    /* recvfrom names a bound sender. */
    int a = socket(AF_UNIX, SOCK_DGRAM, 0), b = socket(AF_UNIX, SOCK_DGRAM, 0);
    EXPECT(a >= 0 && b >= 0);
    struct sockaddr_un an = { .sun_family = AF_UNIX }, bn = { .sun_family = AF_UNIX };
    snprintf(an.sun_path + 1, sizeof an.sun_path - 1, "compat-us-a-%d", (int)getpid());
    snprintf(bn.sun_path + 1, sizeof bn.sun_path - 1, "compat-us-b-%d", (int)getpid());
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                 strlen(an.sun_path + 1));
    socklen_t blen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                 strlen(bn.sun_path + 1));
    EXPECT_EQ(bind(a, (struct sockaddr *)&an, alen), 0);
    EXPECT_EQ(bind(b, (struct sockaddr *)&bn, blen), 0);
    EXPECT_EQ(sendto(b, "hi", 2, 0, (struct sockaddr *)&an, alen), 2);
    struct sockaddr_un from;
    socklen_t flen = sizeof from;
    EXPECT_EQ(recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen), 2);
    EXPECT_EQ(flen, blen);
    EXPECT_EQ(memcmp(from.sun_path, bn.sun_path, blen - offsetof(struct sockaddr_un, sun_path)),
              0);
    close(a);
    close(b);
}

static void seqpackets(void)
{
    int s[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s), 0);
    EXPECT_EQ(send(s[1], "one", 3, 0), 3);
    EXPECT_EQ(send(s[1], "three", 5, 0), 5);
    char buf[16];
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 3);
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 5);
    struct later l;
    start_later(&l, s[1], "later", 5);
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 5); /* waits */
    finish_later(&l);
    EXPECT_EQ(close(s[1]), 0);
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 0); /* end of input */
    close(s[0]);
}

struct drainer {
    int fd;
    long bytes;
    pthread_t thread;
};

static void *drain_later(void *arg)
{
    struct drainer *d = arg;
    sleep_ms(50);
    char buf[8192];
    long r;
    while (d->bytes > 0 && (r = recv(d->fd, buf, sizeof buf, 0)) > 0)
        d->bytes -= r;
    return NULL;
}

static void streams(void)
{
    int s[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    EXPECT_EQ(shutdown(s[1], SHUT_WR), 0);
    char buf[16];
    EXPECT_EQ(recv(s[0], buf, sizeof buf, 0), 0); /* the peer's end of output */
    EXPECT_EQ(send(s[0], "back", 4, 0), 4);       /* the other way still works */
    EXPECT_EQ(recv(s[1], buf, sizeof buf, 0), 4);

    enum { BIG = 1 << 20 };
    char *big = calloc(1, BIG);
    EXPECT(big != NULL);
    struct drainer d = { .fd = s[1], .bytes = BIG };
    EXPECT_EQ(pthread_create(&d.thread, NULL, drain_later, &d), 0);
    EXPECT_EQ(send(s[0], big, BIG, 0), BIG); /* waits for the reader */
    EXPECT_EQ(pthread_join(d.thread, NULL), 0);
    EXPECT_EQ(d.bytes, 0);
    free(big);

    struct ucred cred;
    socklen_t len = sizeof cred;
    EXPECT_EQ(getsockopt(s[0], SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
    EXPECT_EQ(cred.pid, getpid());
    EXPECT_EQ(cred.uid, getuid());
    close(s[0]);
    close(s[1]);
}

static void *write_later(void *arg)
{
    sleep_ms(50);
    EXPECT_EQ(write(*(int *)arg, "piped", 5), 5);
    return NULL;
}

static void rights(void)
{
    int s[2], p[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    EXPECT_EQ(pipe(p), 0);
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec v = { (void *)"r", 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &p[0], sizeof(int));
    EXPECT_EQ(sendmsg(s[0], &m, 0), 1);
    EXPECT_EQ(close(p[0]), 0);

    char one;
    memset(&ctl, 0, sizeof ctl);
    v = (struct iovec){ &one, 1 };
    m = (struct msghdr){ .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof ctl.buf };
    EXPECT_EQ(recvmsg(s[1], &m, 0), 1);
    c = CMSG_FIRSTHDR(&m);
    EXPECT(c != NULL && c->cmsg_type == SCM_RIGHTS);
    int got;
    memcpy(&got, CMSG_DATA(c), sizeof got);
    EXPECT_EQ(fcntl(got, F_GETFL) & O_NONBLOCK, 0);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, write_later, &p[1]), 0);
    char buf[8];
    EXPECT_EQ(read(got, buf, sizeof buf), 5); /* the received end waits, then reads */
    EXPECT_EQ(memcmp(buf, "piped", 5), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    close(got);
    close(p[1]);
    close(s[0]);
    close(s[1]);
}

static int listener;

static void *acceptor(void *arg)
{
    int *out = arg;
    *out = accept(listener, NULL, NULL); /* waits */
    return NULL;
}

static void names(void)
{
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT(listener >= 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "compat-us-l-%d", (int)getpid());
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                 strlen(a.sun_path + 1));
    EXPECT_EQ(bind(listener, (struct sockaddr *)&a, alen), 0);
    EXPECT_EQ(listen(listener, 4), 0);
    int accepted = -1;
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, acceptor, &accepted), 0);
    sleep_ms(50);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(connect(c, (struct sockaddr *)&a, alen), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    EXPECT(accepted >= 0);
    EXPECT_EQ(send(c, "ping", 4, 0), 4);
    char buf[8];
    EXPECT_EQ(recv(accepted, buf, sizeof buf, 0), 4);
    close(accepted);
    close(c);

    int d = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un none = { .sun_family = AF_UNIX };
    snprintf(none.sun_path + 1, sizeof none.sun_path - 1, "compat-us-none-%d",
             (int)getpid());
    socklen_t nlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                 strlen(none.sun_path + 1));
    errno = 0;
    expect_fail(connect(d, (struct sockaddr *)&none, nlen), ECONNREFUSED);
    close(d);
    d = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un missing = { .sun_family = AF_UNIX };
    snprintf(missing.sun_path, sizeof missing.sun_path, "/tmp/compat-us-missing-%d",
             (int)getpid());
    errno = 0;
    expect_fail(connect(d, (struct sockaddr *)&missing, sizeof missing), ENOENT);
    close(d);
    close(listener);
}

int main(void)
{
    alarm(50);
    datagrams();
    seqpackets();
    streams();
    rights();
    names();
    puts("unix_sockets_as_glibc: ok");
    return 0;
}

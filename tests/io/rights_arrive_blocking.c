/* SPDX-License-Identifier: MIT */
/* Description: a descriptor the runtime made non-blocking underneath (a
 * pipe end, a socket) and the application sends with SCM_RIGHTS reaches
 * the receiver in the blocking mode the application believes it has, from
 * the moment the receiver can take it. It used to be given its mode back
 * only after the send returned: a receiver quick enough (CPython's
 * forkserver child reading the pipe it was sent) found O_NONBLOCK set and
 * took it for the application's, and its blocking read failed with
 * EAGAIN. Made certain here: the message carries 4 MiB after the
 * descriptor, so a blocking sendmsg (and sendmmsg) parks after its first
 * part while the receiver takes the descriptor and looks at its flags
 * with raw system calls, as another process would. */
#include <stdbool.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { BIG = 4 << 20 };

struct sender {
    int sock, fd;
    bool mmsg;
    char *data;
};

static void *send_big(void *arg)
{
    struct sender *s = arg;
    struct iovec v = { s->data, BIG };
    struct rights_msg r;
    rights_msg_init(&r, s->fd, &v);
    if (s->mmsg) {
        struct mmsghdr mm = { .msg_hdr = r.m };
        CHECK_EQ(sendmmsg(s->sock, &mm, 1, 0), 1);
        CHECK_EQ(mm.msg_len, (unsigned)BIG);
    } else {
        CHECK_EQ(sendmsg(s->sock, &r.m, 0), (ssize_t)BIG);
    }
    return NULL;
}

/* Receives the descriptor and the first bytes with raw system calls (no
 * wrapper of ours learns anything), then drains the rest. Returns the
 * received descriptor's file status flags. */
static long receive(int sock)
{
    static char buf[65536];
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec v = { buf, 4096 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
    struct pollfd pfd = { .fd = sock, .events = POLLIN };
    CHECK_EQ(poll(&pfd, 1, -1), 1); /* the runtime's socket is non-blocking underneath */
    long n = syscall(SYS_recvmsg, sock, &m, 0);
    CHECK(n > 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    CHECK(c != NULL && c->cmsg_type == SCM_RIGHTS);
    int got;
    memcpy(&got, CMSG_DATA(c), sizeof got);
    long fl = syscall(SYS_fcntl, got, F_GETFL); /* while the sender is still in its call */
    CHECK(fl >= 0);
    size_t total = (size_t)n;
    while (total < BIG) {
        ssize_t r = read(sock, buf, sizeof buf);
        CHECK(r > 0);
        total += (size_t)r;
    }
    CHECK_EQ(close(got), 0);
    return fl;
}

static int check(const char *what, int fd, bool mmsg, char *data)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct sender s = { .sock = sv[0], .fd = fd, .mmsg = mmsg, .data = data };
    cap_thread_t t = spawn(send_big, &s);
    long fl = receive(sv[1]);
    join(t);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    if (fl & O_NONBLOCK) {
        fprintf(stderr, "%s sent by %s arrived non-blocking\n", what, mmsg ? "sendmmsg" : "sendmsg");
        return 1;
    }
    return 0;
}

int main(void)
{
    char *data = calloc(1, BIG);
    CHECK(data != NULL);
    int failed = 0;
    for (int mmsg = 0; mmsg < 2; mmsg++) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        failed |= check("a pipe's read end", p[0], mmsg, data);
        failed |= check("a pipe's write end", p[1], mmsg, data);
        CHECK_EQ(close(p[0]), 0);
        CHECK_EQ(close(p[1]), 0);
        int q[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, q), 0);
        failed |= check("a socket", q[0], mmsg, data);
        CHECK_EQ(close(q[0]), 0);
        CHECK_EQ(close(q[1]), 0);
    }
    free(data);
    return failed;
}

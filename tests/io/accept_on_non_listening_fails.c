/* SPDX-License-Identifier: MIT */
/* Description: accept on a socket that does not listen fails with EINVAL
 * at once, as the kernel's does, also on a socket the runtime does not
 * own (here one it gave back, blocking, when it was sent with
 * SCM_RIGHTS): a socketpair end, and a connected TCP socket. Before,
 * accept on such a socket waited for a readiness that never comes (it
 * parked for good; here until a watchdog closed the socket 20 s later,
 * EBADF). An owned socket that does not listen fails the same way. */
#include "io/io_util.h"

static atomic_int done;
static int target;

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000 && !atomic_load(&done); i++)
        cap_usleep(10000);
    if (!atomic_load(&done))
        close(target); /* wakes the parked accept with EBADF */
    return NULL;
}

/* Sends fd over a socketpair, which gives it back its blocking mode: the
 * runtime no longer owns it. */
static void give_away(int fd)
{
    int sp[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sp), 0);
    char cb[CMSG_SPACE(sizeof fd)];
    memset(cb, 0, sizeof cb);
    struct iovec v = { "f", 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cb,
                        .msg_controllen = sizeof cb };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fd);
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    CHECK_EQ(sendmsg(sp[0], &m, 0), 1);
    close(sp[0]);
    close(sp[1]); /* the passed copy goes with the queue */
}

static void accept_fails(int fd)
{
    target = fd;
    atomic_store(&done, 0);
    cap_thread_t w = spawn(watchdog, NULL);
    errno = 0;
    CHECK_EQ(accept(fd, NULL, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    atomic_store(&done, 1);
    join(w);
}

int main(void)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    accept_fails(sv[0]); /* owned */
    give_away(sv[0]);
    accept_fails(sv[0]);

    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(l, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
    CHECK_EQ(listen(l, 4), 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
    give_away(c);
    accept_fails(c);
    return 0;
}

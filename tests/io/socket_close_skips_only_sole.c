/* SPDX-License-Identifier: MIT */
/* Description: closing a socket the runtime made and never saw shared
 * skips its EPOLL_CTL_DEL (io/fd.h, sole sockets), and nothing else does.
 * For an accepted socket that a thread has waited on (so it is armed):
 *  - closed alone: the peer sees EOF (with io_uring a poll still armed
 *    would hold the file open) and, under epoll, no registration of it
 *    is left;
 *  - dup'ed, sent by SCM_RIGHTS (still in flight), or inherited by a
 *    forked child, then closed: under epoll its registration is gone
 *    even though its file lives on (the runtime deleted it), and a thread
 *    parked on the other reference (the dup, the received descriptor) is
 *    woken by data and reads it; the peer sees EOF once that reference
 *    closes too;
 *  - closed without the DEL and its number reused by a new socket: data
 *    for the new socket reaches its reader, and only that.
 * The registrations are read from /proc/self/fdinfo of the runtime's
 * epoll descriptor. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

static int port, listener;
static int epfd = -1; /* the runtime's epoll instance, -1 under other backends */

static int find_epoll_fd(void)
{
    const char *net = getenv("CAP_NETIO");
    if (net != NULL && *net != '\0' && strcmp(net, "epoll") != 0)
        return -1;
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (strcmp(link, "anon_inode:[eventpoll]") == 0)
            found = atoi(e->d_name);
    }
    closedir(d);
    CHECK_GE(found, 0);
    return found;
}

/* Whether the runtime's epoll set holds a registration for number fd. */
static int registered(int fd)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
    int f = open(path, O_RDONLY);
    CHECK_GE(f, 0);
    size_t len = 0;
    ssize_t n;
    while ((n = read(f, buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    CHECK_EQ(n, 0);
    close(f);
    buf[len] = '\0';
    for (char *p = buf; (p = strstr(p, "tfd:")) != NULL; p += 4)
        if (atoi(p + 4) == fd)
            return 1;
    return 0;
}

struct conn {
    int client, server;
};

static struct conn connect_pair(void)
{
    struct conn c;
    c.client = tcp_connect(port);
    CHECK_GE(c.client, 0);
    c.server = accept(listener, NULL, NULL);
    CHECK_GE(c.server, 0);
    return c;
}

/* Reads one byte from *arg (parks until it comes) and checks it. */
static void *read_x(void *arg)
{
    int fd = *(int *)arg;
    char ch = 0;
    ssize_t n = read(fd, &ch, 1);
    if (n != 1)
        fprintf(stderr, "read of %d: %s\n", fd, strerror(errno));
    CHECK_EQ(n, 1);
    CHECK_EQ(ch, 'x');
    return NULL;
}

/* fd is armed (a poll that waits and times out registers it), and a
 * thread reading it, parked if it got there first, gets a byte from the
 * peer. */
static void wake_parked_reader(int fd, int peer)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 1), 0);
    int arg = fd;
    cap_thread_t t = spawn(read_x, &arg);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* let it park: the wake-up must come from the backend */
    CHECK_EQ(write(peer, "x", 1), 1);
    join(t);
}

static void peer_sees_eof(int peer)
{
    char ch;
    CHECK_EQ(read(peer, &ch, 1), 0);
}

static void alone(void)
{
    struct conn c = connect_pair();
    wake_parked_reader(c.server, c.client);
    if (epfd >= 0)
        CHECK(registered(c.server));
    CHECK_EQ(close(c.server), 0);
    if (epfd >= 0)
        CHECK(!registered(c.server));
    peer_sees_eof(c.client);
    close(c.client);
}

static void duped(void)
{
    struct conn c = connect_pair();
    wake_parked_reader(c.server, c.client);
    int d = dup(c.server);
    CHECK_GE(d, 0);
    CHECK_EQ(close(c.server), 0);
    if (epfd >= 0)
        CHECK(!registered(c.server));
    wake_parked_reader(d, c.client);
    CHECK_EQ(close(d), 0);
    peer_sees_eof(c.client);
    close(c.client);
}

static void sent(void)
{
    struct conn c = connect_pair();
    wake_parked_reader(c.server, c.client);
    int sp[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
    char one = '1';
    struct iovec v = { &one, 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &c.server, sizeof(int));
    CHECK_EQ(sendmsg(sp[0], &m, 0), 1);
    CHECK_EQ(close(c.server), 0); /* the message in flight holds the file */
    if (epfd >= 0)
        CHECK(!registered(c.server));
    memset(cbuf, 0, sizeof cbuf);
    m.msg_controllen = sizeof cbuf;
    CHECK_EQ(recvmsg(sp[1], &m, 0), 1);
    cm = CMSG_FIRSTHDR(&m);
    CHECK(cm != NULL && cm->cmsg_type == SCM_RIGHTS);
    int r;
    memcpy(&r, CMSG_DATA(cm), sizeof r);
    /* The file arrives blocking, as the sender's application sees it (the
     * runtime gave back the mode it had set underneath when it was sent). */
    CHECK_EQ(fcntl(r, F_GETFL) & O_NONBLOCK, 0);
    wake_parked_reader(r, c.client);
    CHECK_EQ(close(r), 0);
    peer_sees_eof(c.client);
    close(c.client);
    close(sp[0]);
    close(sp[1]);
}

static void inherited(void)
{
    struct conn c = connect_pair();
    wake_parked_reader(c.server, c.client);
    int go[2];
    CHECK_EQ(pipe(go), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) { /* holds the socket until told; raw calls only */
        char ch;
        syscall(SYS_read, go[0], &ch, 1);
        _exit(0);
    }
    CHECK_EQ(close(c.server), 0);
    if (epfd >= 0)
        CHECK(!registered(c.server));
    CHECK_EQ(write(go[1], "g", 1), 1);
    int st = 0;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    peer_sees_eof(c.client);
    close(c.client);
    close(go[0]);
    close(go[1]);
}

static void reused(void)
{
    struct conn old = connect_pair();
    wake_parked_reader(old.server, old.client);
    int num = old.server;
    struct conn c;
    c.client = tcp_connect(port);
    CHECK_GE(c.client, 0);
    CHECK_EQ(close(old.server), 0);
    c.server = accept(listener, NULL, NULL);
    CHECK_EQ(c.server, num); /* the lowest free number comes back */
    int arg = c.server;
    cap_thread_t t = spawn(read_x, &arg);
    for (int i = 0; i < 20; i++)
        cap_yield();
    /* The old connection's peer: its socket is gone, nothing can reach
     * the new life from there (a write may fail with EPIPE/ECONNRESET). */
    signal(SIGPIPE, SIG_IGN);
    (void)write(old.client, "y", 1);
    cap_yield();
    CHECK_EQ(write(c.client, "x", 1), 1);
    join(t);
    close(c.server);
    close(c.client);
    close(old.client);
}

int main(void)
{
    listener = tcp_listener(SOCK_STREAM, 64, &port);
    epfd = find_epoll_fd();
    for (int round = 0; round < 20; round++) {
        alone();
        duped();
        sent();
        inherited();
        reused();
    }
    close(listener);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a private pipe (io/pipe.h: its waiters are woken only by
 * transfers through the wrappers) falls back to the backend, without
 * losing a thread already parked on it, the moment anything could move
 * data the wrappers do not see. Each case parks a reader on a private
 * pipe, then makes the pipe escape while it waits, then moves a byte in a
 * way only the kernel sees: a dup of the write end and a raw write
 * through the dup; poll() on the read end by a second thread, then a raw
 * write (the poller and the reader both return); a forked child's raw
 * write; a child made by posix_spawn writing to its inherited end;
 * the write end sent with SCM_RIGHTS (and received blocking) and a raw
 * write through the received descriptor; splice from another pipe. Without the fall back the reader
 * would sleep through the byte and the test would hang. */
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

static int p[2];

static void let_park(void)
{
    cap_sleep_ns(20 * 1000 * 1000); /* the test holds either way */
}

static cap_thread_t parked_reader(void)
{
    CHECK_EQ(pipe(p), 0);
    cap_thread_t t = spawn(read_one_byte, &p[0]);
    let_park();
    return t;
}

static void done(cap_thread_t t, char want)
{
    CHECK_EQ((intptr_t)join(t), want);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

static void raw_write(int fd, char c)
{
    CHECK_EQ(syscall(SYS_write, fd, &c, 1), 1);
}

static void *poll_then_read(void *arg)
{
    (void)arg;
    struct pollfd q = { .fd = p[0], .events = POLLIN };
    CHECK_EQ(poll(&q, 1, -1), 1);
    CHECK(q.revents & POLLIN);
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    return (void *)(intptr_t)c;
}

static void wait_child(pid_t pid)
{
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st));
    CHECK_EQ(WEXITSTATUS(st), 0);
}

int main(void)
{
    /* dup */
    cap_thread_t t = parked_reader();
    int d = dup(p[1]);
    CHECK(d >= 0);
    raw_write(d, 'a');
    CHECK_EQ(close(d), 0);
    done(t, 'a');

    /* poll() by another thread */
    t = parked_reader();
    cap_thread_t u = spawn(poll_then_read, NULL);
    let_park();
    raw_write(p[1], 'b');
    raw_write(p[1], 'b');
    CHECK_EQ((intptr_t)join(u), 'b');
    done(t, 'b');

    /* fork */
    t = parked_reader();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char c = 'c';
        _exit(syscall(SYS_write, p[1], &c, 1) == 1 ? 0 : 1);
    }
    wait_child(pid);
    done(t, 'c');

    /* posix_spawn: the child writes to its inherited write end */
    t = parked_reader();
    char cmd[64];
    snprintf(cmd, sizeof cmd, "printf d >&%d", p[1]);
    char *args[] = { "/bin/sh", "-c", cmd, NULL };
    CHECK_EQ(posix_spawn(&pid, "/bin/sh", NULL, NULL, args, environ), 0);
    wait_child(pid);
    done(t, 'd');

    /* SCM_RIGHTS */
    t = parked_reader();
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    send_fd(sv[0], p[1]);
    /* Received without the wrappers, as another process would. */
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    char one;
    struct iovec v = { &one, 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
    CHECK_EQ(syscall(SYS_recvmsg, sv[1], &m, 0), 1);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    CHECK(c != NULL && c->cmsg_type == SCM_RIGHTS);
    int got;
    memcpy(&got, CMSG_DATA(c), sizeof got);
    /* The receiver sees the blocking pipe the sender's application made,
     * not the runtime's O_NONBLOCK underneath. */
    CHECK_EQ(syscall(SYS_fcntl, got, F_GETFL) & O_NONBLOCK, 0);
    raw_write(got, 'e');
    CHECK_EQ(syscall(SYS_close, got), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    done(t, 'e');

    /* splice from another pipe */
    t = parked_reader();
    int q[2];
    CHECK_EQ(pipe(q), 0);
    CHECK_EQ(write(q[1], "f", 1), 1);
    CHECK_EQ(splice(q[0], NULL, p[1], NULL, 1, 0), 1);
    CHECK_EQ(close(q[0]), 0);
    CHECK_EQ(close(q[1]), 0);
    done(t, 'f');
    return 0;
}

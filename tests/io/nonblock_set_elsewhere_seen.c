/* SPDX-License-Identifier: MIT */
/* Description: O_NONBLOCK set on a descriptor's file where the wrappers do
 * not see it — a raw fcntl system call, another process sharing the file
 * (a forked child) — makes a blocking read, recv or accept of a
 * descriptor the runtime did not create fail with EAGAIN, as the kernel's
 * call would, instead of parking; cleared again the same way, the read
 * waits for data as before. Before, the thread parked until data came
 * (here: never). (Cleared elsewhere after the runtime learnt the
 * descriptor non-blocking at its first use, it is still not seen:
 * README, Limits.) */
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

static void raw_setfl(int fd, long fl)
{
    CHECK_EQ(syscall(SYS_fcntl, fd, F_SETFL, fl), 0);
}

static int wfd;

static void *write_later(void *arg)
{
    (void)arg;
    cap_usleep(5000);
    CHECK_EQ(write(wfd, "z", 1), 1);
    return NULL;
}

int main(void)
{
    /* Made past the runtime: a descriptor it did not create. */
    int p[2];
    CHECK_EQ(syscall(SYS_pipe2, p, 0), 0);
    wfd = p[1];
    char c;
    /* In use while blocking: the runtime has learnt it so. */
    CHECK_EQ(write(p[1], "a", 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);

    /* A raw fcntl. */
    raw_setfl(p[0], O_NONBLOCK);
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    raw_setfl(p[0], 0);
    cap_thread_t t = spawn(write_later, NULL);
    CHECK_EQ(read(p[0], &c, 1), 1); /* waits again */
    CHECK_EQ(c, 'z');
    join(t);

    /* Another process sharing the file. */
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        raw_setfl(p[0], O_NONBLOCK);
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    raw_setfl(p[0], 0);

    /* A socket the runtime did not create: recv, and accept. */
    int sv[2];
    CHECK_EQ(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(send(sv[1], "b", 1, 0), 1);
    CHECK_EQ(recv(sv[0], &c, 1, 0), 1);
    raw_setfl(sv[0], O_NONBLOCK);
    errno = 0;
    CHECK_EQ(recv(sv[0], &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    int ls = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    CHECK_GE(ls, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(syscall(SYS_bind, ls, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(syscall(SYS_listen, ls, 4), 0);
    raw_setfl(ls, O_NONBLOCK);
    errno = 0;
    CHECK_EQ(accept(ls, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);

    CHECK_EQ(close(ls), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

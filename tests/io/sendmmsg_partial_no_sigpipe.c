/* SPDX-License-Identifier: MIT */
/* Description: a blocking sendmmsg whose message the socket took only in
 * part, and whose peer then closes, returns 1 with the bytes that went in
 * msg_len and raises no SIGPIPE, as Linux's does (the message's sendmsg
 * returns its count). Before, the runtime's continuation of the message
 * got EPIPE with a SIGPIPE, which by default kills the process. */
#include <signal.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

enum { BIG = 8 << 20 };

static int sv[2];
static volatile sig_atomic_t pipes;

static void on_pipe(int sig)
{
    (void)sig;
    pipes++;
}

/* Closes the peer once the first part of the message is queued. */
static void *closer(void *arg)
{
    (void)arg;
    int n = 0;
    while (n == 0) {
        CHECK_EQ(ioctl(sv[1], FIONREAD, &n), 0);
        if (n == 0)
            cap_usleep(1000);
    }
    close(sv[1]);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_pipe };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char *big = calloc(1, BIG);
    CHECK(big != NULL);
    cap_thread_t t = spawn(closer, NULL);
    struct iovec v = { big, BIG };
    struct mmsghdr m = { .msg_hdr = { .msg_iov = &v, .msg_iovlen = 1 } };
    CHECK_EQ(sendmmsg(sv[0], &m, 1, 0), 1);
    CHECK_GT(m.msg_len, 0);
    CHECK_LT(m.msg_len, BIG);
    join(t);
    CHECK_EQ(pipes, 0);
    /* The next call reports the hang-up, with its SIGPIPE. */
    errno = 0;
    CHECK_EQ(send(sv[0], big, 1, 0), -1);
    CHECK_EQ(errno, EPIPE);
    CHECK_EQ(pipes, 1);
    free(big);
    return 0;
}

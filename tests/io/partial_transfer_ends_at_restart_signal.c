/* SPDX-License-Identifier: MIT */
/* Description: a blocking transfer that moved data and then waits is
 * ended by a caught signal even when its handler has SA_RESTART, and
 * returns the count moved, as Linux's does (nothing is restarted: the
 * call succeeded in part): a write to a full socket and to a full pipe,
 * a recv with MSG_WAITALL that got part of what it asked for, a sendmmsg
 * whose message filled the socket, a recvmmsg that got one datagram of
 * two. Before, the wait after the partial transfer was restartable and
 * the call went on waiting for good. */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "io/io_util.h"

enum { BIG = 8 << 20 };

static volatile sig_atomic_t hits;
static void on_usr1(int sig)
{
    (void)sig;
    hits++;
}

static int mode, fds[2];
static atomic_int done;
static long result;
static char *big;

static void *transfer(void *arg)
{
    (void)arg;
    switch (mode) {
    case 0: /* socket write */
    case 1: /* pipe write */
        result = write(fds[1], big, BIG);
        break;
    case 2: /* MSG_WAITALL read */
        result = recv(fds[0], big, 1000, MSG_WAITALL);
        break;
    case 3: { /* sendmmsg of one message bigger than the socket holds */
        struct iovec v = { big, BIG };
        struct mmsghdr m = { .msg_hdr = { .msg_iov = &v, .msg_iovlen = 1 } };
        result = sendmmsg(fds[1], &m, 1, 0);
        if (result == 1)
            result = m.msg_len;
        break;
    }
    case 4: { /* recvmmsg of two datagrams, one sent */
        char b[2][16];
        struct iovec v[2] = { { b[0], 16 }, { b[1], 16 } };
        struct mmsghdr m[2] = { { .msg_hdr = { .msg_iov = &v[0], .msg_iovlen = 1 } },
                                { .msg_hdr = { .msg_iov = &v[1], .msg_iovlen = 1 } } };
        result = recvmmsg(fds[0], m, 2, 0, NULL);
        break;
    }
    }
    atomic_store(&done, 1);
    return NULL;
}

/* The bytes queued for reading on fd. */
static int queued(int fd)
{
    int n = 0;
    CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
    return n;
}

static void run(int m)
{
    mode = m;
    atomic_store(&done, 0);
    result = -2;
    hits = 0;
    if (m == 1)
        CHECK_EQ(pipe(fds), 0);
    else
        CHECK_EQ(socketpair(AF_UNIX, m == 4 ? SOCK_DGRAM : SOCK_STREAM, 0, fds), 0);
    cap_thread_t t = spawn(transfer, NULL);
    if (m == 2)
        CHECK_EQ(write(fds[1], "abc", 3), 3);
    if (m == 4)
        CHECK_EQ(send(fds[1], "one", 3, 0), 3);
    /* Until the transfer moved its part: then it waits for more. */
    if (m == 0 || m == 1 || m == 3)
        while (queued(fds[0]) == 0)
            cap_usleep(1000);
    /* One signal that comes before the thread parks runs the handler and
     * interrupts nothing: send until the call ends (bounded, so that the
     * old behaviour fails rather than hangs). */
    for (int i = 0; i < 2000 && !atomic_load(&done); i++) {
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        cap_usleep(5000);
    }
    CHECK(atomic_load(&done));
    join(t);
    CHECK_GE(hits, 1);
    if (m == 2)
        CHECK_EQ(result, 3);
    else if (m == 4)
        CHECK_EQ(result, 1);
    else {
        CHECK_GT(result, 0);
        CHECK_LT(result, BIG);
    }
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    big = calloc(1, BIG);
    CHECK(big != NULL);
    for (int m = 0; m < 5; m++)
        run(m);
    free(big);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: recvmmsg and sendmmsg keep Linux's blocking meaning on
 * sockets the runtime made (non-blocking underneath; a blocking recvmmsg
 * returned EAGAIN at once before they were intercepted): a blocking
 * recvmmsg parks only its thread until all vlen messages came, one at a
 * time; MSG_WAITFORONE returns what is queued after the first; its
 * timeout is looked at only after a message came ({0,0}: one message even
 * with more queued) and what is left is written back; a bad timeout is
 * EINVAL; the application's O_NONBLOCK, MSG_DONTWAIT and SO_RCVTIMEO give
 * EAGAIN; a blocking sendmmsg on a stream socket sends every message
 * whole past a full buffer; datagrams keep their order and boundaries; a
 * thread the runtime does not run gets the blocking meaning too. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "io/io_util.h"

enum { BIG = 1 << 20, BIGS = 3 };

static int dg[2]; /* AF_UNIX datagram pair */
static struct ticker tick;

static void send_dg(int fd, int k)
{
    char msg[16];
    int n = snprintf(msg, sizeof msg, "m%d", k);
    CHECK_EQ(send(fd, msg, (size_t)n, 0), n);
}

/* vec[i] receives into bufs[i]. */
static void setup(struct mmsghdr *vec, struct iovec *iov, char (*bufs)[32], unsigned n)
{
    memset(vec, 0, n * sizeof *vec);
    for (unsigned i = 0; i < n; i++) {
        iov[i] = (struct iovec){ bufs[i], sizeof bufs[i] };
        vec[i].msg_hdr.msg_iov = &iov[i];
        vec[i].msg_hdr.msg_iovlen = 1;
    }
}

static void check_msg(const struct mmsghdr *m, const char *buf, int k)
{
    char want[16];
    int n = snprintf(want, sizeof want, "m%d", k);
    CHECK_EQ(m->msg_len, (unsigned)n);
    CHECK(memcmp(buf, want, (size_t)n) == 0);
}

/* Sends three datagrams one at a time, each after the receiver has had
 * time to park again. */
static void *slow_sender(void *arg)
{
    (void)arg;
    for (int k = 0; k < 3; k++) {
        usleep(20000);
        send_dg(dg[1], k);
    }
    return NULL;
}

static void blocking_waits_for_all(void)
{
    struct mmsghdr vec[3];
    struct iovec iov[3];
    char bufs[3][32];
    setup(vec, iov, bufs, 3);
    long before = atomic_load(&tick.ticks);
    cap_thread_t s = spawn(slow_sender, NULL);
    CHECK_EQ(recvmmsg(dg[0], vec, 3, 0, NULL), 3);
    CHECK(atomic_load(&tick.ticks) > before); /* others ran while it waited */
    for (int k = 0; k < 3; k++)
        check_msg(&vec[k], bufs[k], k);
    join(s);
}

static void *one_sender(void *arg)
{
    (void)arg;
    usleep(20000);
    send_dg(dg[1], 7);
    return NULL;
}

static void waitforone(void)
{
    struct mmsghdr vec[4];
    struct iovec iov[4];
    char bufs[4][32];
    setup(vec, iov, bufs, 4);
    cap_thread_t s = spawn(one_sender, NULL);
    CHECK_EQ(recvmmsg(dg[0], vec, 4, MSG_WAITFORONE, NULL), 1);
    check_msg(&vec[0], bufs[0], 7);
    join(s);

    /* Queued already: all three at once, in order. */
    for (int k = 0; k < 3; k++)
        send_dg(dg[1], k);
    setup(vec, iov, bufs, 4);
    CHECK_EQ(recvmmsg(dg[0], vec, 4, MSG_WAITFORONE, NULL), 3);
    for (int k = 0; k < 3; k++)
        check_msg(&vec[k], bufs[k], k);
}

static void timeouts(void)
{
    struct mmsghdr vec[4];
    struct iovec iov[4];
    char bufs[4][32];

    /* {0,0}: looked at after the first message, which ends the call. */
    for (int k = 0; k < 3; k++)
        send_dg(dg[1], k);
    setup(vec, iov, bufs, 4);
    struct timespec ts = { 0, 0 };
    CHECK_EQ(recvmmsg(dg[0], vec, 4, 0, &ts), 1);
    check_msg(&vec[0], bufs[0], 0);
    CHECK(ts.tv_sec == 0 && ts.tv_nsec == 0);
    setup(vec, iov, bufs, 4);
    CHECK_EQ(recvmmsg(dg[0], vec, 4, MSG_WAITFORONE, NULL), 2); /* the rest */
    check_msg(&vec[0], bufs[0], 1);
    check_msg(&vec[1], bufs[1], 2);

    /* A long one: waits for every message, writes back what is left. */
    setup(vec, iov, bufs, 3);
    ts = (struct timespec){ 600, 0 };
    cap_thread_t s = spawn(slow_sender, NULL);
    CHECK_EQ(recvmmsg(dg[0], vec, 3, 0, &ts), 3);
    CHECK(ts.tv_sec < 600 && ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
    join(s);

    ts = (struct timespec){ 0, 1000000000 };
    errno = 0;
    CHECK_EQ(recvmmsg(dg[0], vec, 3, 0, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    ts = (struct timespec){ -1, 0 };
    errno = 0;
    CHECK_EQ(recvmmsg(dg[0], vec, 3, 0, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(recvmmsg(dg[0], vec, 0, 0, NULL), 0);
}

static void nonblocking(void)
{
    struct mmsghdr vec[2];
    struct iovec iov[2];
    char bufs[2][32];
    setup(vec, iov, bufs, 2);
    errno = 0;
    CHECK_EQ(recvmmsg(dg[0], vec, 2, MSG_DONTWAIT, NULL), -1);
    CHECK_EQ(errno, EAGAIN);

    int fl = fcntl(dg[0], F_GETFL);
    CHECK_EQ(fcntl(dg[0], F_SETFL, fl | O_NONBLOCK), 0);
    errno = 0;
    CHECK_EQ(recvmmsg(dg[0], vec, 2, 0, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    send_dg(dg[1], 5);
    CHECK_EQ(recvmmsg(dg[0], vec, 2, 0, NULL), 1);
    check_msg(&vec[0], bufs[0], 5);
    CHECK_EQ(fcntl(dg[0], F_SETFL, fl), 0);

    struct timeval tv = { 0, 30000 };
    CHECK_EQ(setsockopt(dg[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    errno = 0;
    CHECK_EQ(recvmmsg(dg[0], vec, 2, 0, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    /* One came, the timeout ends the wait for the second: the count. */
    send_dg(dg[1], 6);
    CHECK_EQ(recvmmsg(dg[0], vec, 2, 0, NULL), 1);
    check_msg(&vec[0], bufs[0], 6);
    tv = (struct timeval){ 0, 0 };
    CHECK_EQ(setsockopt(dg[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);

    errno = 0;
    CHECK_EQ(recvmmsg(-1, vec, 2, 0, NULL), -1);
    CHECK_EQ(errno, EBADF);
}

/* ---- sendmmsg ---------------------------------------------------------- */

static int st[2]; /* AF_UNIX stream pair, small buffers */

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + i / 251);
}

static void *stream_reader(void *arg)
{
    (void)arg;
    static unsigned char buf[64 * 1024];
    size_t got = 0;
    while (got < (size_t)BIG * BIGS) {
        ssize_t n = read(st[1], buf, sizeof buf);
        CHECK_GT(n, 0);
        for (ssize_t i = 0; i < n; i++)
            CHECK_EQ(buf[i], pattern(got + (size_t)i));
        got += (size_t)n;
    }
    return NULL;
}

static void sendmmsg_stream(void)
{
    int small = 16 * 1024;
    CHECK_EQ(setsockopt(st[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    unsigned char *data = malloc((size_t)BIG * BIGS);
    CHECK(data != NULL);
    for (size_t i = 0; i < (size_t)BIG * BIGS; i++)
        data[i] = pattern(i);
    struct mmsghdr vec[BIGS];
    struct iovec iov[BIGS][2];
    memset(vec, 0, sizeof vec);
    for (int k = 0; k < BIGS; k++) { /* two parts each, so a cut may fall in either */
        unsigned char *m = data + (size_t)k * BIG;
        iov[k][0] = (struct iovec){ m, 1000 };
        iov[k][1] = (struct iovec){ m + 1000, BIG - 1000 };
        vec[k].msg_hdr.msg_iov = iov[k];
        vec[k].msg_hdr.msg_iovlen = 2;
    }
    cap_thread_t r = spawn(stream_reader, NULL);
    CHECK_EQ(sendmmsg(st[0], vec, BIGS, 0), BIGS);
    for (int k = 0; k < BIGS; k++)
        CHECK_EQ(vec[k].msg_len, (unsigned)BIG);
    join(r);

    /* Full buffer and MSG_DONTWAIT: EAGAIN, nothing sent. */
    char fill[4096] = { 0 };
    while (send(st[0], fill, sizeof fill, MSG_DONTWAIT) > 0)
        ;
    errno = 0;
    CHECK_EQ(sendmmsg(st[0], vec, 1, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);
    free(data);
}

static void sendmmsg_datagrams(void)
{
    struct mmsghdr out[5], in[5];
    struct iovec oiov[5], iiov[5];
    char obufs[5][32], ibufs[5][32];
    memset(out, 0, sizeof out);
    for (int k = 0; k < 5; k++) {
        int n = snprintf(obufs[k], sizeof obufs[k], "m%d", k);
        oiov[k] = (struct iovec){ obufs[k], (size_t)n };
        out[k].msg_hdr.msg_iov = &oiov[k];
        out[k].msg_hdr.msg_iovlen = 1;
    }
    CHECK_EQ(sendmmsg(dg[1], out, 5, 0), 5);
    setup(in, iiov, ibufs, 5);
    CHECK_EQ(recvmmsg(dg[0], in, 5, 0, NULL), 5);
    for (int k = 0; k < 5; k++)
        check_msg(&in[k], ibufs[k], k);
}

/* ---- a thread the runtime does not run -------------------------------- */

static atomic_int foreign_calling;

static void *foreign_recvmmsg(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0);
    struct mmsghdr vec[2];
    struct iovec iov[2];
    char bufs[2][32];
    setup(vec, iov, bufs, 2);
    atomic_store(&foreign_calling, 1);
    CHECK_EQ(recvmmsg(dg[0], vec, 2, 0, NULL), 2);
    check_msg(&vec[0], bufs[0], 0);
    check_msg(&vec[1], bufs[1], 1);
    return NULL;
}

static void foreign_thread(void)
{
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, foreign_recvmmsg, NULL), 0);
    while (!atomic_load(&foreign_calling))
        cap_yield();
    usleep(20000); /* it is waiting, or about to: either way it must get both */
    send_dg(dg[1], 0);
    usleep(20000);
    send_dg(dg[1], 1);
    CHECK_EQ(pthread_join(kt, NULL), 0);
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, st), 0);
    cap_thread_t t = spawn(ticker_run, &tick);
    blocking_waits_for_all();
    waitforone();
    timeouts();
    nonblocking();
    sendmmsg_stream();
    sendmmsg_datagrams();
    foreign_thread();
    atomic_store(&tick.stop, 1);
    join(t);
    return 0;
}

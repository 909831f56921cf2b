/* SPDX-License-Identifier: MIT */
/* Description: corners where the runtime's non-blocking emulation of a
 * blocking call must still answer as Linux does for the blocking call:
 *  - read/readv of zero bytes from an empty socket (Unix stream, TCP,
 *    UDP) returns 0 at once (the kernel's sock_read_iter); it used to
 *    park until data came;
 *  - a blocking connect refused by the peer can be retried on the same
 *    socket: each try is ECONNREFUSED (the non-blocking connect underneath
 *    left the socket "connecting", so the retry got ECONNABORTED); and a
 *    later try reaches a listener that appeared meanwhile;
 *  - select takes nfds above FD_SETSIZE when the sets are bigger than an
 *    fd_set (it was EINVAL) and sees a descriptor numbered above 1024;
 *  - epoll_pwait2 with a malformed timeout is EINVAL (it waited);
 *  - clock_nanosleep on a CPU-time clock: the process's is ENOTSUP (the
 *    kernel's sleep would block the worker until the process used that
 *    much CPU: with one worker, for ever), the thread's EINVAL as in
 *    Linux; an alarm clock answers as the kernel does for it (EOPNOTSUPP
 *    without an RTC, EINVAL for flags other than TIMER_ABSTIME, EPERM
 *    without CAP_WAKE_ALARM: it used to sleep on its base clock in every
 *    case) and otherwise sleeps like its base clock. */
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "io/io_util.h"

static void zero_length_reads(void)
{
    char c;
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(read(sv[0], &c, 0), 0);
    CHECK_EQ(readv(sv[0], NULL, 0), 0);
    struct iovec empty = { &c, 0 };
    CHECK_EQ(readv(sv[0], &empty, 1), 0);

    int port, l = tcp_listener(SOCK_STREAM, 4, &port);
    int client = tcp_connect(port);
    CHECK_GE(client, 0);
    int server = accept(l, NULL, NULL);
    CHECK_GE(server, 0);
    CHECK_EQ(read(server, &c, 0), 0);
    CHECK_EQ(readv(client, &empty, 1), 0);

    int u = tcp_listener(SOCK_DGRAM, 0, &port);
    CHECK_EQ(read(u, &c, 0), 0);

    /* Data still flows afterwards, and a zero read does not consume it. */
    CHECK_EQ(write(client, "z", 1), 1);
    CHECK_EQ(read(server, &c, 0), 0);
    CHECK_EQ(read(server, &c, 1), 1);
    CHECK_EQ(c, 'z');
    int fds[] = { sv[0], sv[1], l, client, server, u };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
}

static void connect_retried_after_refusal(void)
{
    /* A port nobody listens on: take one from the kernel, then close it. */
    int port, l = tcp_listener(SOCK_STREAM, 1, &port);
    CHECK_EQ(close(l), 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(s, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    for (int i = 0; i < 3; i++) {
        errno = 0;
        CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), -1);
        CHECK_EQ(errno, ECONNREFUSED);
    }
    /* A listener on that port now: the same socket's next try connects.
     * (Another program may have taken the port meanwhile: then skip.) */
    int again = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    CHECK_EQ(setsockopt(again, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    if (bind(again, (struct sockaddr *)&a, sizeof a) == 0) {
        CHECK_EQ(listen(again, 1), 0);
        CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
        int peer = accept(again, NULL, NULL);
        CHECK_GE(peer, 0);
        CHECK_EQ(write(s, "c", 1), 1);
        char c;
        CHECK_EQ(read(peer, &c, 1), 1);
        CHECK_EQ(close(peer), 0);
    }
    CHECK_EQ(close(again), 0);
    CHECK_EQ(close(s), 0);
}

static void select_above_fd_setsize(void)
{
    if (raise_nofile(2048) < 1300) {
        fprintf(stderr, "RLIMIT_NOFILE below 1300: select part skipped\n");
        return;
    }
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int high = 1200;
    CHECK_EQ(dup2(sv[0], high), high);
    enum { WORDS = 2048 / (8 * sizeof(unsigned long)) };
    unsigned long rset[WORDS], wset[WORDS];
    const int bits = 8 * sizeof(unsigned long);
    memset(rset, 0, sizeof rset);
    memset(wset, 0, sizeof wset);
    rset[high / bits] |= 1UL << (high % bits);
    wset[high / bits] |= 1UL << (high % bits);
    struct timeval zero = { 0, 0 };
    /* Writable, not readable. */
    CHECK_EQ(select(high + 1, (fd_set *)rset, (fd_set *)wset, NULL, &zero), 1);
    CHECK_EQ(rset[high / bits], 0);
    CHECK(wset[high / bits] & (1UL << (high % bits)));
    CHECK_EQ(select(2000, NULL, NULL, NULL, &zero), 0);
    CHECK_EQ(close(high), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
}

static void epoll_pwait2_bad_timeout(void)
{
    int ep = epoll_create1(0);
    CHECK_GE(ep, 0);
    struct epoll_event ev;
    struct timespec bad[] = { { 0, -1 }, { 0, 1000000000 }, { -1, 0 } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_EQ(epoll_pwait2(ep, &ev, 1, &bad[i], NULL), -1);
        CHECK_EQ(errno, EINVAL);
    }
    CHECK_EQ(close(ep), 0);
}

static void cpu_clock_sleeps(void)
{
    struct timespec tiny = { 0, 1000 };
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &tiny, NULL), ENOTSUP);
    CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &tiny, NULL), EINVAL);
    clockid_t self_clock;
    CHECK_EQ(clock_getcpuclockid(getpid(), &self_clock), 0);
    CHECK_EQ(clock_nanosleep(self_clock, 0, &tiny, NULL), ENOTSUP);
    /* The kernel's own answer for the same sleep, whatever this machine
     * has (an RTC or not, the capability or not). */
    struct timespec zero = { 0, 0 };
    int clocks[] = { CLOCK_BOOTTIME_ALARM, CLOCK_REALTIME_ALARM };
    int flag_sets[] = { 0, TIMER_ABSTIME, 4 };
    for (size_t c = 0; c < 2; c++)
        for (size_t f = 0; f < 3; f++) {
            long r = syscall(SYS_clock_nanosleep, clocks[c], flag_sets[f], &zero, NULL);
            int want = r == 0 ? 0 : errno;
            CHECK_EQ(clock_nanosleep(clocks[c], flag_sets[f], &tiny, NULL), want);
        }
}

int main(void)
{
    zero_length_reads();
    connect_retried_after_refusal();
    select_above_fd_setsize();
    epoll_pwait2_bad_timeout();
    cpu_clock_sleeps();
    return 0;
}

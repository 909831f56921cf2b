/* SPDX-License-Identifier: MIT */
/* Description: a user thread parked in a blocking call is cancelled: it
 * ends with CAP_CANCELED, its two cleanup handlers run innermost first,
 * and it leaves no waiter behind on the descriptor: afterwards another
 * thread makes the same call on the same descriptor and gets what the
 * peer sends (a stale record would steal or corrupt that wake-up). Every
 * kind of intercepted cancellation point that parks: read, readv, write
 * (full pipe), accept, recv, recvmsg, connect (Unix listener with a full
 * backlog, and TCP with a full accept queue), poll, ppoll, select,
 * pselect, epoll_wait, epoll_pwait, nanosleep, clock_nanosleep, sleep,
 * usleep, pause, sigsuspend. Without cancellation at these points the
 * join never returns and the test times out. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>

#include "io/io_util.h"

enum kind { READ, READV, WRITE, ACCEPT, RECV, RECVMSG, CONNECT_UNIX, CONNECT_TCP, POLL, PPOLL,
            SELECT, PSELECT, EPOLL, EPOLL_PWAIT, NANOSLEEP, CLOCK_NANOSLEEP, SLEEP, USLEEP,
            PAUSE, SIGSUSPEND, NKINDS };
static const char *const names[] = {
    "read", "readv", "write", "accept", "recv", "recvmsg", "connect-unix", "connect-tcp",
    "poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait", "nanosleep",
    "clock_nanosleep", "sleep", "usleep", "pause", "sigsuspend" };

static int rd, wr, full_rd, full_wr, listener, port, sv[2], epfd;
static int unix_listener, tcp_full_port;
static struct sockaddr_un unix_addr;
static int connect_sock;
static cap_sem_t going;
static char trail[8];
static atomic_int ntrail;

static void note(void *arg)
{
    trail[atomic_fetch_add(&ntrail, 1)] = *(const char *)arg;
}

/* The call of kind k; its result (for the follower, which is not
 * cancelled). buf receives one byte for the reading kinds. */
static long call(enum kind k, char *buf)
{
    struct iovec v = { buf, 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    struct pollfd p = { .fd = rd, .events = POLLIN };
    struct timespec forever = { .tv_sec = 100000 };
    struct epoll_event ev;
    sigset_t none;
    sigemptyset(&none);
    fd_set s;
    FD_ZERO(&s);
    FD_SET(rd, &s);
    switch (k) {
    case READ: return read(rd, buf, 1);
    case READV: return readv(rd, &v, 1);
    case WRITE: return write(full_wr, "w", 1);
    case ACCEPT: return accept(listener, NULL, NULL);
    case RECV: return recv(sv[0], buf, 1, 0);
    case RECVMSG: return recvmsg(sv[0], &m, 0);
    case CONNECT_UNIX:
        return connect(connect_sock, (struct sockaddr *)&unix_addr, sizeof unix_addr);
    case CONNECT_TCP: {
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)tcp_full_port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        return connect(connect_sock, (struct sockaddr *)&a, sizeof a);
    }
    case POLL: return poll(&p, 1, -1);
    case PPOLL: return ppoll(&p, 1, NULL, &none);
    case SELECT: return select(rd + 1, &s, NULL, NULL, NULL);
    case PSELECT: return pselect(rd + 1, &s, NULL, NULL, NULL, &none);
    case EPOLL: return epoll_wait(epfd, &ev, 1, -1);
    case EPOLL_PWAIT: return epoll_pwait(epfd, &ev, 1, -1, &none);
    case NANOSLEEP: return nanosleep(&forever, NULL);
    case CLOCK_NANOSLEEP: return clock_nanosleep(CLOCK_MONOTONIC, 0, &forever, NULL);
    case SLEEP: return (long)sleep(100000);
    case USLEEP: return usleep(999999); /* repeated: only the cancel ends it */
    case PAUSE: return pause();
    case SIGSUSPEND: return sigsuspend(&none);
    default: return -1;
    }
}

static void *blocker(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    char buf[1];
    cap_cleanup_push(note, "a");
    cap_cleanup_push(note, "b");
    CHECK_EQ(cap_sem_post(&going), 0);
    for (;;) {
        long r = call(k, buf);
        if (k != USLEEP) {
            fprintf(stderr, "%s returned %ld (errno %d) instead of acting on the cancel\n",
                    names[k], r, errno);
            exit(1);
        }
    }
    cap_cleanup_pop(0);
    cap_cleanup_pop(0);
    return NULL;
}

static char got;
static void *follower(void *arg)
{
    return (void *)call((enum kind)(long)arg, &got);
}

static void make_full_pipe(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    full_rd = p[0];
    full_wr = p[1];
    CHECK_EQ(fcntl(full_wr, F_SETFL, O_NONBLOCK), 0);
    static char chunk[4096];
    while (write(full_wr, chunk, sizeof chunk) > 0)
        ;
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(fcntl(full_wr, F_SETFL, 0), 0);
}

/* A Unix listener whose backlog is full: a blocking connect must wait. */
static void make_full_unix_listener(void)
{
    unix_listener = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(unix_listener, 0);
    unix_addr.sun_family = AF_UNIX;
    snprintf(unix_addr.sun_path + 1, sizeof unix_addr.sun_path - 1, "cap-cancel-%d", getpid());
    CHECK_EQ(bind(unix_listener, (struct sockaddr *)&unix_addr, sizeof unix_addr), 0);
    CHECK_EQ(listen(unix_listener, 0), 0);
    for (int i = 0;; i++) {
        CHECK_LT(i, 100);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        CHECK_GE(s, 0);
        if (connect(s, (struct sockaddr *)&unix_addr, sizeof unix_addr) != 0) {
            CHECK_EQ(errno, EAGAIN);
            close(s);
            break;
        }
    }
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&going, 0, 0), 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rd = p[0];
    wr = p[1];
    make_full_pipe();
    listener = tcp_listener(SOCK_STREAM, 8, &port);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, rd, &ev), 0);
    make_full_unix_listener();
    /* A TCP listener with backlog 0 holding one connection: the kernel
     * drops the next SYN, so that connect stays in progress. */
    int tcp_full = tcp_listener(SOCK_STREAM, 0, &tcp_full_port);
    int first = tcp_connect(tcp_full_port);
    CHECK_GE(first, 0);

    for (long k = 0; k < NKINDS; k++) {
        if (k == CONNECT_UNIX || k == CONNECT_TCP) {
            connect_sock = socket(k == CONNECT_UNIX ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
            CHECK_GE(connect_sock, 0);
        }
        atomic_store(&ntrail, 0);
        memset(trail, 0, sizeof trail);
        cap_thread_t t = spawn(blocker, (void *)k);
        CHECK_EQ(cap_sem_wait(&going), 0);
        /* With one worker the blocker is parked by now; with two, give it
         * time to park (a cancel that comes first acts at entry: the
         * outcome is the same). */
        cap_sleep_ns(2000000);
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK(join(t) == CAP_CANCELED);
        fprintf(stderr, "%s: cancelled, trail %s\n", names[k], trail);
        CHECK_EQ(strcmp(trail, "ba"), 0);

        /* The descriptor is usable: a new waiter gets the next event. */
        cap_thread_t f = 0;
        switch (k) {
        case READ: case READV: case POLL: case PPOLL: case SELECT: case PSELECT: case EPOLL:
        case EPOLL_PWAIT: {
            got = 0;
            f = spawn(follower, (void *)k);
            cap_sleep_ns(1000000);
            CHECK_EQ(write(wr, "x", 1), 1);
            CHECK_EQ((long)join(f), 1);
            if (k == READ || k == READV) {
                CHECK_EQ(got, 'x');
            } else {
                char c;
                CHECK_EQ(read(rd, &c, 1), 1);
            }
            break;
        }
        case WRITE: {
            f = spawn(follower, (void *)k);
            cap_sleep_ns(1000000);
            static char chunk[4096];
            CHECK_EQ(read(full_rd, chunk, sizeof chunk), (long)sizeof chunk);
            CHECK_EQ((long)join(f), 1);
            break;
        }
        case ACCEPT: {
            f = spawn(follower, (void *)k);
            cap_sleep_ns(1000000);
            int c = tcp_connect(port);
            CHECK_GE(c, 0);
            long a = (long)join(f);
            CHECK_GE(a, 0);
            close((int)a);
            close(c);
            break;
        }
        case RECV: case RECVMSG: {
            got = 0;
            f = spawn(follower, (void *)k);
            cap_sleep_ns(1000000);
            CHECK_EQ(send(sv[1], "z", 1, 0), 1);
            CHECK_EQ((long)join(f), 1);
            CHECK_EQ(got, 'z');
            break;
        }
        case CONNECT_UNIX: {
            close(connect_sock);
            connect_sock = socket(AF_UNIX, SOCK_STREAM, 0);
            f = spawn(follower, (void *)k);
            cap_sleep_ns(1000000);
            int a = accept(unix_listener, NULL, NULL); /* room for one more */
            CHECK_GE(a, 0);
            CHECK_EQ((long)join(f), 0);
            close(a);
            close(connect_sock);
            break;
        }
        case CONNECT_TCP:
            close(connect_sock); /* still in progress: closing it is the cleanup */
            break;
        default:
            break;
        }
    }
    close(first);
    close(tcp_full);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a cancel already pending when a thread enters an I/O
 * cancellation point acts before the call does anything, even though the
 * call could complete without waiting: the data stays in the pipe or
 * socket, nothing is written, the pending connection stays queued, the
 * descriptor stays open, the file is not created, poll's revents are not
 * touched. Covers read, readv, write, recv, send, pread, pwrite, accept,
 * connect, poll, select, epoll_wait, open, openat, close, fsync,
 * fdatasync, msync(MS_SYNC), tcdrain (on a pipe: it would fail with
 * ENOTTY), aio_suspend and gai_suspend on ended requests, nanosleep(0)
 * and clock_nanosleep with a past deadline. */
#include <aio.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <termios.h>
#include <time.h>

#include "io/io_util.h"

enum kind { READ, READV, WRITE, RECV, SEND, PREAD, PWRITE, ACCEPT, CONNECT, POLL, SELECT,
            EPOLL, OPEN, OPENAT, CLOSE, FSYNC, FDATASYNC, MSYNC, TCDRAIN, AIO_SUSPEND,
            GAI_SUSPEND, NANOSLEEP, CLOCK_NANOSLEEP, NKINDS };
static const char *const names[] = {
    "read", "readv", "write", "recv", "send", "pread", "pwrite", "accept", "connect",
    "poll", "select", "epoll_wait", "open", "openat", "close", "fsync", "fdatasync",
    "msync", "tcdrain", "aio_suspend", "gai_suspend", "nanosleep", "clock_nanosleep" };

static int full_rd, full_wr; /* a pipe holding one byte */
static int empty_rd, empty_wr;
static int sv[2];             /* sv[1] has one byte to read */
static int listener, port;    /* one connection queued */
static int conn_sock, file, epfd, victim;
static char path[64];
static struct pollfd pfd;
static struct epoll_event eev;
static char buf[8];
static char *mapped; /* file's first page, shared */
static struct aiocb ended_aio; /* a read of file, ended */
static struct gaicb ended_gai; /* a lookup of localhost, ended */

static long call(enum kind k)
{
    struct iovec v = { buf, 1 };
    struct timespec zero = { 0, 0 };
    fd_set s;
    switch (k) {
    case READ: return read(full_rd, buf, 1);
    case READV: return readv(full_rd, &v, 1);
    case WRITE: return write(empty_wr, "w", 1);
    case RECV: return recv(sv[1], buf, 1, 0);
    case SEND: return send(sv[1], "s", 1, 0);
    case PREAD: return pread(file, buf, 1, 0);
    case PWRITE: return pwrite(file, "p", 1, 0);
    case ACCEPT: return accept(listener, NULL, NULL);
    case CONNECT: {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        return connect(conn_sock, (struct sockaddr *)&a, sizeof a);
    }
    case POLL: return poll(&pfd, 1, -1);
    case SELECT:
        FD_ZERO(&s);
        FD_SET(full_rd, &s);
        return select(full_rd + 1, &s, NULL, NULL, NULL);
    case EPOLL: return epoll_wait(epfd, &eev, 1, -1);
    case OPEN: return open(path, O_CREAT | O_WRONLY, 0600);
    case OPENAT: return openat(AT_FDCWD, path, O_CREAT | O_WRONLY, 0600);
    case CLOSE: return close(victim);
    case FSYNC: return fsync(file);
    case FDATASYNC: return fdatasync(file);
    case MSYNC: return msync(mapped, 4096, MS_SYNC);
    case TCDRAIN: return tcdrain(empty_wr);
    case AIO_SUSPEND: {
        const struct aiocb *l[1] = { &ended_aio };
        return aio_suspend(l, 1, NULL);
    }
    case GAI_SUSPEND: {
        const struct gaicb *l[1] = { &ended_gai };
        return gai_suspend(l, 1, NULL);
    }
    case NANOSLEEP: return nanosleep(&zero, NULL);
    case CLOCK_NANOSLEEP: return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &zero, NULL);
    default: return -1;
    }
}

static atomic_int cleaned;
static void note(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *self_cancelling(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    cap_cleanup_push(note, NULL);
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    long r = call(k);
    fprintf(stderr, "%s returned %ld (errno %d): the pending cancel did not act\n", names[k],
            r, errno);
    exit(1);
    cap_cleanup_pop(0);
    return NULL;
}

static int readable(int fd)
{
    int n = -1;
    CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
    return n;
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    full_rd = p[0];
    full_wr = p[1];
    CHECK_EQ(write(full_wr, "d", 1), 1);
    CHECK_EQ(pipe(p), 0);
    empty_rd = p[0];
    empty_wr = p[1];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(send(sv[0], "r", 1, 0), 1);
    listener = tcp_listener(SOCK_STREAM, 8, &port);
    int queued = tcp_connect(port);
    CHECK_GE(queued, 0);
    conn_sock = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(conn_sock, 0);
    snprintf(path, sizeof path, "/tmp/cap-cancel-entry-%d", getpid());
    unlink(path);
    char fpath[64];
    snprintf(fpath, sizeof fpath, "/tmp/cap-cancel-file-%d", getpid());
    file = open(fpath, O_CREAT | O_RDWR | O_TRUNC, 0600);
    CHECK_GE(file, 0);
    unlink(fpath);
    CHECK_EQ(pwrite(file, "f", 1, 0), 1);
    CHECK_EQ(ftruncate(file, 4096), 0);
    mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    CHECK(mapped != MAP_FAILED);
    static char aio_buf[1];
    ended_aio = (struct aiocb){ .aio_fildes = file, .aio_buf = aio_buf, .aio_nbytes = 1 };
    ended_aio.aio_sigevent.sigev_notify = SIGEV_NONE;
    CHECK_EQ(aio_read(&ended_aio), 0);
    while (aio_error(&ended_aio) == EINPROGRESS)
        cap_usleep(1000);
    ended_gai = (struct gaicb){ .ar_name = "127.0.0.1" };
    struct gaicb *gl[1] = { &ended_gai };
    CHECK_EQ(getaddrinfo_a(GAI_WAIT, gl, 1, NULL), 0);
    pfd = (struct pollfd){ .fd = full_rd, .events = POLLIN, .revents = 0x7777 };
    epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, full_rd, &ev), 0);
    eev.data.u64 = 0x5555;
    victim = dup(empty_rd);
    CHECK_GE(victim, 0);

    for (long k = 0; k < NKINDS; k++) {
        memset(buf, 0, sizeof buf);
        cap_thread_t t = spawn(self_cancelling, (void *)k);
        CHECK(join(t) == CAP_CANCELED);
        CHECK_EQ(atomic_load(&cleaned), k + 1);
        CHECK_EQ(buf[0], 0);
    }
    /* Nothing happened. */
    CHECK_EQ(readable(full_rd), 1);
    CHECK_EQ(readable(empty_rd), 0);
    CHECK_EQ(readable(sv[1]), 1);
    CHECK_EQ(readable(sv[0]), 0);
    char c;
    CHECK_EQ(pread(file, &c, 1, 0), 1);
    CHECK_EQ(c, 'f');
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    CHECK_EQ(getpeername(conn_sock, (struct sockaddr *)&peer, &plen), -1);
    CHECK_EQ(errno, ENOTCONN);
    CHECK_EQ(pfd.revents, 0x7777);
    CHECK_EQ(eev.data.u64, 0x5555);
    struct stat st;
    CHECK_EQ(stat(path, &st), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_GE(fcntl(victim, F_GETFD), 0);
    /* and the queued connection is still there for a thread that is not cancelled */
    int a = accept(listener, NULL, NULL);
    CHECK_GE(a, 0);
    CHECK_EQ(read(full_rd, &c, 1), 1);
    CHECK_EQ(c, 'd');
    close(a);
    close(queued);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: the wrappers that read or write the application's
 * structures themselves (iovec arrays, message headers, pollfd arrays,
 * fd_sets, timeouts, signal masks, FIONBIO's int) give the kernel's error
 * for a pointer that is not there: EFAULT (EINVAL / EMSGSIZE for a vector
 * longer than IOV_MAX), as libc does, instead of a SIGSEGV in the
 * library. NULL, a wild low address, a page with no access, a read-only page
 * where the call writes, and a range that runs off the end of a mapping.
 * A page of a file mapping past the file's end (SIGBUS, not SIGSEGV) too,
 * and all of it again once the program installed SIGSEGV and SIGBUS
 * handlers of its own, which must not see the library's checks.
 * Nothing may be consumed or sent by a refused call (but recvfrom's, which
 * takes its data before it writes the address, as Linux's does), and the
 * descriptors keep working afterwards. */
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <time.h>

#include "io/io_util.h"

/* Bad arguments on purpose. */
#pragma GCC diagnostic ignored "-Wnonnull"
#ifndef __clang__ /* GCC's own warnings */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

#define EXPECT_ERR(call, err)      \
    do {                           \
        errno = 0;                 \
        CHECK_EQ((long)(call), -1); \
        CHECK_EQ(errno, err);      \
    } while (0)

static void *unmapped;  /* a page nothing may touch (PROT_NONE) */
static void *readonly;  /* a page mapped PROT_READ */
static char *edge;      /* the last byte before that page */

static void map_pages(void)
{
    char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    /* PROT_NONE rather than unmapped: a hole could be mapped again by
     * anyone, the runtime's own workers included. */
    CHECK_EQ(mprotect(p + 4096, 4096, PROT_NONE), 0);
    CHECK_EQ(mprotect(p + 2 * 4096, 4096, PROT_READ), 0);
    unmapped = p + 4096;
    readonly = p + 2 * 4096;
    edge = p + 4096 - 1;
}

static void transfers(int s, int peer)
{
    void *bad[] = { NULL, (void *)16, unmapped };
    char buf[4];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_ERR(readv(s, bad[i], 1), EFAULT);
        EXPECT_ERR(writev(s, bad[i], 1), EFAULT);
        EXPECT_ERR(recvmsg(s, bad[i], 0), EFAULT);
        EXPECT_ERR(sendmsg(s, bad[i], 0), EFAULT);
        struct msghdr m = { .msg_iov = bad[i], .msg_iovlen = 1 };
        EXPECT_ERR(recvmsg(s, &m, 0), EFAULT);
        EXPECT_ERR(sendmsg(s, &m, 0), EFAULT);
    }
    /* An iovec array whose second element is past the mapping's end. */
    struct iovec *v = (struct iovec *)(edge + 1 - sizeof *v);
    v->iov_base = buf;
    v->iov_len = 1;
    EXPECT_ERR(readv(s, v, 2), EFAULT);
    EXPECT_ERR(writev(s, v, 2), EFAULT);
    EXPECT_ERR(writev(s, unmapped, IOV_MAX + 1), EINVAL);
    EXPECT_ERR(readv(s, unmapped, -1), EINVAL);
    struct msghdr huge = { .msg_iov = unmapped, .msg_iovlen = IOV_MAX + 1 };
    EXPECT_ERR(sendmsg(s, &huge, 0), EMSGSIZE);
    /* Ancillary data that is not there: nothing is sent. */
    struct iovec one = { "x", 1 };
    struct msghdr ctl = { .msg_iov = &one, .msg_iovlen = 1, .msg_control = unmapped,
                          .msg_controllen = 64 };
    EXPECT_ERR(sendmsg(s, &ctl, 0), EFAULT);
    /* recvfrom's address length is read and written after the data is
     * taken (Linux's move_addr_to_user): the call waits for data, takes
     * it, then fails. */
    struct sockaddr_storage from;
    CHECK_EQ(write(peer, "r", 1), 1);
    EXPECT_ERR(recvfrom(s, buf, 1, 0, (struct sockaddr *)&from, unmapped), EFAULT);
    CHECK_EQ(write(peer, "r", 1), 1);
    EXPECT_ERR(recvfrom(s, buf, 1, 0, (struct sockaddr *)&from, readonly), EFAULT);

    /* Nothing was consumed or sent: one byte each way still arrives alone. */
    CHECK_EQ(write(peer, "a", 1), 1);
    CHECK_EQ(read(s, buf, sizeof buf), 1);
    CHECK_EQ(buf[0], 'a');
    CHECK_EQ(write(s, "b", 1), 1);
    CHECK_EQ(read(peer, buf, sizeof buf), 1);
    CHECK_EQ(buf[0], 'b');
}

static void positioned(void)
{
    char path[] = "/tmp/cap-efault-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(write(fd, "hello", 5), 5);
    EXPECT_ERR(preadv(fd, unmapped, 1, 0), EFAULT);
    EXPECT_ERR(pwritev(fd, NULL, 1, 0), EFAULT);
    EXPECT_ERR(preadv2(fd, (void *)16, 1, 0, 0), EFAULT);
    EXPECT_ERR(pwritev2(fd, unmapped, 1, 0, 0), EFAULT);
    EXPECT_ERR(preadv(fd, unmapped, IOV_MAX + 1, 0), EINVAL);
    EXPECT_ERR(readv(fd, unmapped, 1), EFAULT);
    char buf[8];
    CHECK_EQ(pread(fd, buf, sizeof buf, 0), 5);
    CHECK_EQ(close(fd), 0);
}

static void readiness(int s)
{
    EXPECT_ERR(poll(NULL, 1, 0), EFAULT);
    EXPECT_ERR(poll(unmapped, 1, 0), EFAULT);
    EXPECT_ERR(poll(readonly, 1, 0), EFAULT); /* poll writes revents */
    struct pollfd p = { .fd = s, .events = POLLOUT };
    EXPECT_ERR(ppoll(&p, 1, unmapped, NULL), EFAULT);
    struct timespec zero = { 0, 0 };
    EXPECT_ERR(ppoll(&p, 1, &zero, unmapped), EFAULT);
    CHECK_EQ(ppoll(&p, 1, &zero, NULL), 1);

    EXPECT_ERR(select(s + 1, unmapped, NULL, NULL, NULL), EFAULT);
    EXPECT_ERR(select(s + 1, NULL, readonly, NULL, NULL), EFAULT);
    fd_set w;
    FD_ZERO(&w);
    FD_SET(s, &w);
    EXPECT_ERR(select(s + 1, NULL, &w, NULL, unmapped), EFAULT);
    EXPECT_ERR(select(s + 1, NULL, &w, NULL, readonly), EFAULT); /* Linux writes it */
    EXPECT_ERR(pselect(s + 1, NULL, &w, NULL, unmapped, NULL), EFAULT);
    EXPECT_ERR(pselect(s + 1, NULL, &w, NULL, &zero, unmapped), EFAULT);
    CHECK_EQ(pselect(s + 1, NULL, &w, NULL, &zero, NULL), 1);

    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    struct epoll_event ev;
    EXPECT_ERR(epoll_pwait(ep, &ev, 1, 0, unmapped), EFAULT);
    EXPECT_ERR(epoll_pwait2(ep, &ev, 1, unmapped, NULL), EFAULT);
    CHECK_EQ(epoll_pwait2(ep, &ev, 1, &zero, NULL), 0);
    CHECK_EQ(close(ep), 0);
}

static void sleeps_and_masks(int s)
{
    EXPECT_ERR(nanosleep(NULL, NULL), EFAULT);
    EXPECT_ERR(nanosleep(unmapped, NULL), EFAULT);
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, unmapped, NULL), EFAULT);
    /* rem is written only when a signal cuts the sleep short. */
    struct timespec tiny = { 0, 1000 };
    CHECK_EQ(nanosleep(&tiny, unmapped), 0);
    EXPECT_ERR(sigsuspend(unmapped), EFAULT);
    EXPECT_ERR(ioctl(s, FIONBIO, NULL), EFAULT);
    EXPECT_ERR(ioctl(s, FIONBIO, unmapped), EFAULT);
    EXPECT_ERR(ioctl(-1, FIONBIO, NULL), EBADF);
    CHECK_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, 0); /* FIONBIO's view unchanged */
}

/* A page of a shared file mapping past the file's end: touching it is a
 * SIGBUS, and the kernel's answer EFAULT. */
static void beyond_file_end(int s)
{
    char path[] = "/tmp/cap-efault-map-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(ftruncate(fd, 2 * 4096), 0);
    char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    CHECK_EQ(ftruncate(fd, 100), 0);
    EXPECT_ERR(readv(s, (void *)(m + 4096), 1), EFAULT);
    EXPECT_ERR(poll((void *)(m + 4096), 1, 0), EFAULT);
    CHECK_EQ(munmap(m, 2 * 4096), 0);
    CHECK_EQ(close(fd), 0);
}

static void one_round(void)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    transfers(sv[0], sv[1]);
    int pp[2];
    CHECK_EQ(pipe(pp), 0);
    EXPECT_ERR(readv(pp[0], unmapped, 1), EFAULT);
    EXPECT_ERR(writev(pp[1], NULL, 1), EFAULT);
    CHECK_EQ(write(pp[1], "p", 1), 1);
    char c;
    CHECK_EQ(read(pp[0], &c, 1), 1);
    positioned();
    readiness(sv[0]);
    sleeps_and_masks(sv[0]);
    beyond_file_end(sv[0]);
    int fds[] = { sv[0], sv[1], pp[0], pp[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
}

static volatile sig_atomic_t program_handler_ran;

static void program_fault_handler(int sig)
{
    (void)sig;
    program_handler_ran = 1;
}

int main(void)
{
    map_pages();
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = program_fault_handler;
            sigemptyset(&sa.sa_mask);
            CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
            CHECK_EQ(sigaction(SIGBUS, &sa, NULL), 0);
        }
        one_round();
    }
    CHECK_EQ(program_handler_ran, 0);
    return 0;
}

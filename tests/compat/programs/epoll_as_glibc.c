/* SPDX-License-Identifier: MIT */
/* Description: an epoll set the program makes behaves as the kernel's:
 * level-triggered readiness is reported until drained; edge-triggered
 * once per arrival; one-shot once until re-armed with EPOLL_CTL_MOD;
 * EPOLLHUP for a pipe whose writer closed, EPOLLRDHUP for a socket whose
 * peer shut down writing; the data word comes back as registered;
 * epoll_ctl's errors (EEXIST, ENOENT, EBADF, EINVAL, EPERM) and
 * epoll_wait's (EINVAL for maxevents 0); a closed descriptor leaves the
 * set; a timeout of 0 returns at once; and a thread blocked in
 * epoll_wait is woken by a write from another thread. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

static void add(int ep, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = { .events = events, .data.u64 = data };
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
}

/* epoll_wait with timeout 0: the count, the first event in *ev. */
static int look(int ep, struct epoll_event *ev)
{
    struct epoll_event evs[8];
    int n = epoll_wait(ep, evs, 8, 0);
    if (n > 0 && ev != NULL)
        *ev = evs[0];
    return n;
}

static void triggers(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    EXPECT(ep >= 0);
    int lt[2], et[2], os[2];
    EXPECT_EQ(pipe(lt), 0);
    EXPECT_EQ(pipe(et), 0);
    EXPECT_EQ(pipe(os), 0);
    struct epoll_event ev;
    char buf[8];

    add(ep, lt[0], EPOLLIN, 0x1111222233334444ull);
    EXPECT_EQ(look(ep, NULL), 0);
    EXPECT_EQ(write(lt[1], "ab", 2), 2);
    for (int i = 0; i < 3; i++) { /* level: every time */
        EXPECT_EQ(look(ep, &ev), 1);
        EXPECT_EQ(ev.events, EPOLLIN);
        EXPECT(ev.data.u64 == 0x1111222233334444ull);
    }
    EXPECT_EQ(read(lt[0], buf, sizeof buf), 2);
    EXPECT_EQ(look(ep, NULL), 0);
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, lt[0], NULL), 0);

    add(ep, et[0], EPOLLIN | EPOLLET, 2);
    EXPECT_EQ(write(et[1], "a", 1), 1);
    EXPECT_EQ(look(ep, &ev), 1);
    EXPECT_EQ(look(ep, NULL), 0); /* edge: once */
    EXPECT_EQ(write(et[1], "b", 1), 1);
    EXPECT_EQ(look(ep, &ev), 1); /* a new arrival */
    EXPECT(ev.data.u64 == 2);
    EXPECT_EQ(look(ep, NULL), 0);
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, et[0], NULL), 0);

    add(ep, os[0], EPOLLIN | EPOLLONESHOT, 3);
    EXPECT_EQ(write(os[1], "a", 1), 1);
    EXPECT_EQ(look(ep, &ev), 1);
    EXPECT_EQ(write(os[1], "b", 1), 1);
    EXPECT_EQ(look(ep, NULL), 0); /* disabled until re-armed */
    struct epoll_event mod = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 4 };
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, os[0], &mod), 0);
    EXPECT_EQ(look(ep, &ev), 1);
    EXPECT(ev.data.u64 == 4);

    /* Hang-ups. */
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, os[0], NULL), 0);
    EXPECT_EQ(read(os[0], buf, sizeof buf), 2);
    add(ep, os[0], EPOLLIN, 5);
    EXPECT_EQ(close(os[1]), 0);
    EXPECT_EQ(look(ep, &ev), 1);
    EXPECT_EQ(ev.events & EPOLLHUP, EPOLLHUP);

    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    add(ep, sv[0], EPOLLIN | EPOLLRDHUP, 6);
    EXPECT_EQ(shutdown(sv[1], SHUT_WR), 0);
    int n = epoll_wait(ep, (struct epoll_event[8]){ 0 }, 8, 0);
    EXPECT_EQ(n, 2);
    struct epoll_event evs[8];
    n = epoll_wait(ep, evs, 8, 0);
    EXPECT_EQ(n, 2);
    int seen_rdhup = 0;
    for (int i = 0; i < n; i++)
        if (evs[i].data.u64 == 6)
            seen_rdhup = (evs[i].events & (EPOLLIN | EPOLLRDHUP)) == (EPOLLIN | EPOLLRDHUP);
    EXPECT_EQ(seen_rdhup, 1);

    /* A closed descriptor (its only one) leaves the set. */
    EXPECT_EQ(close(os[0]), 0);
    EXPECT_EQ(close(sv[0]), 0);
    EXPECT_EQ(look(ep, NULL), 0);
    EXPECT_EQ(close(sv[1]), 0);
    EXPECT_EQ(close(lt[0]), 0);
    EXPECT_EQ(close(lt[1]), 0);
    EXPECT_EQ(close(et[0]), 0);
    EXPECT_EQ(close(et[1]), 0);
    EXPECT_EQ(close(ep), 0);
}

static void errors(void)
{
    int ep = epoll_create1(0);
    EXPECT(ep >= 0);
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    struct epoll_event ev = { .events = EPOLLIN };
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), -1);
    EXPECT_EQ(errno, EEXIST);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev), -1);
    EXPECT_EQ(errno, ENOENT);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL), -1);
    EXPECT_EQ(errno, ENOENT);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, 12345, &ev), -1);
    EXPECT_EQ(errno, EBADF);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), -1);
    EXPECT_EQ(errno, EINVAL);
    char path[] = "/tmp/capepollXXXXXX";
    int file = mkstemp(path);
    EXPECT(file >= 0);
    EXPECT_EQ(unlink(path), 0);
    errno = 0;
    EXPECT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, file, &ev), -1);
    EXPECT_EQ(errno, EPERM);
    struct epoll_event out[1];
    errno = 0;
    EXPECT_EQ(epoll_wait(ep, out, 0, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(epoll_wait(p[0], out, 1, 0), -1); /* not an epoll descriptor */
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(close(file), 0);
    EXPECT_EQ(close(p[0]), 0);
    EXPECT_EQ(close(p[1]), 0);
    EXPECT_EQ(close(ep), 0);
}

/* ---- a blocked epoll_wait woken by another thread ---------------------- */

static int wake_pipe[2];

static void *writer(void *arg)
{
    (void)arg;
    struct timespec t = { 0, 20000000 };
    nanosleep(&t, NULL);
    EXPECT_EQ(write(wake_pipe[1], "w", 1), 1);
    return NULL;
}

static void blocked_wait(void)
{
    int ep = epoll_create1(0);
    EXPECT(ep >= 0);
    EXPECT_EQ(pipe(wake_pipe), 0);
    add(ep, wake_pipe[0], EPOLLIN, 9);
    for (int round = 0; round < 5; round++) {
        pthread_t t;
        EXPECT_EQ(pthread_create(&t, NULL, writer, NULL), 0);
        struct epoll_event ev;
        int n;
        while ((n = epoll_wait(ep, &ev, 1, -1)) < 0)
            EXPECT_EQ(errno, EINTR);
        EXPECT_EQ(n, 1);
        EXPECT(ev.data.u64 == 9);
        char c;
        EXPECT_EQ(read(wake_pipe[0], &c, 1), 1);
        EXPECT_EQ(pthread_join(t, NULL), 0);
    }
    EXPECT_EQ(close(wake_pipe[0]), 0);
    EXPECT_EQ(close(wake_pipe[1]), 0);
    EXPECT_EQ(close(ep), 0);
}

int main(void)
{
    triggers();
    errors();
    blocked_wait();
    return 0;
}

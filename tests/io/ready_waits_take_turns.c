/* SPDX-License-Identifier: MIT */
/* Description: a thread whose blocking-style calls never have to wait
 * still lets the other threads of its worker run. main loops on one kind
 * of call that returns at once (poll, select, epoll_wait on a pipe
 * holding a byte nobody reads; read of /dev/zero; a read and a write that
 * refill a pipe; a read of an empty non-blocking pipe, EAGAIN; a
 * zero-length sleep) until a flag is set, and only a thread created
 * beside it sets the flag. On one worker that thread runs only if main's
 * calls yield, as the kernel would have preempted an NPTL thread: before
 * the rule covered them (src/io/io.h, "Turns") the poll, select,
 * epoll_wait, EAGAIN and sleep loops never ended and the timeout failed
 * the test (CPython's fork multiprocessing.Pool hung so in its first
 * map: its handler thread polled a pipe that only another thread of its
 * worker would read). With two workers the setter may run on the other
 * one, so those runs check only that nothing breaks (under CAP_MIGRATE=1
 * too). Run with a variant's name to run only that one. */
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "io/io_util.h"

static atomic_int flag;

static void *setter(void *arg)
{
    (void)arg;
    atomic_store(&flag, 1);
    return NULL;
}

struct loop {
    const char *name;
    void (*step)(int fd[2]);
};

static void poll_step(int fd[2])
{
    struct pollfd p = { .fd = fd[0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK(p.revents & POLLIN);
}

static void select_step(int fd[2])
{
    fd_set r;
    FD_ZERO(&r);
    FD_SET(fd[0], &r);
    CHECK_EQ(select(fd[0] + 1, &r, NULL, NULL, NULL), 1);
    CHECK(FD_ISSET(fd[0], &r));
}

static int ep = -1;

static void epoll_step(int fd[2])
{
    (void)fd;
    struct epoll_event e;
    CHECK_EQ(epoll_wait(ep, &e, 1, -1), 1);
    CHECK(e.events & EPOLLIN);
}

static int zero = -1;

static void zero_read_step(int fd[2])
{
    (void)fd;
    char buf[16];
    CHECK_EQ(read(zero, buf, sizeof buf), (ssize_t)sizeof buf);
}

/* Takes the pipe's byte and puts it back: each read finds it there. */
static void refill_step(int fd[2])
{
    char c;
    CHECK_EQ(read(fd[0], &c, 1), 1);
    CHECK_EQ(write(fd[1], &c, 1), 1);
}

static int empty = -1; /* a non-blocking pipe's read end, never written */

static void eagain_step(int fd[2])
{
    (void)fd;
    char c;
    CHECK_EQ(read(empty, &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
}

static void sleep0_step(int fd[2])
{
    (void)fd;
    struct timespec ts = { 0, 0 };
    CHECK_EQ(nanosleep(&ts, NULL), 0);
}

static const struct loop loops[] = {
    { "poll", poll_step },         { "select", select_step },
    { "epoll_wait", epoll_step },  { "read_zero", zero_read_step },
    { "read_refill", refill_step }, { "read_eagain", eagain_step },
    { "sleep0", sleep0_step },
};

int main(int argc, char **argv)
{
    int fd[2];
    CHECK_EQ(pipe(fd), 0);
    CHECK_EQ(write(fd[1], "x", 1), 1); /* always readable from now on */
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK_GE(ep, 0);
    struct epoll_event e = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd[0], &e), 0);
    zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    CHECK_GE(zero, 0);
    int e2[2];
    CHECK_EQ(pipe2(e2, O_NONBLOCK), 0);
    empty = e2[0];
    int ran = 0;
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
        if (argc > 1 && strcmp(argv[1], loops[i].name) != 0)
            continue;
        ran++;
        atomic_store(&flag, 0);
        cap_thread_t t = spawn(setter, NULL);
        long steps = 0;
        while (!atomic_load(&flag)) {
            loops[i].step(fd);
            steps++;
        }
        join(t);
        fprintf(stderr, "%s: the setter ran after %ld calls\n", loops[i].name, steps);
    }
    CHECK_GE(ran, 1);
    return 0;
}

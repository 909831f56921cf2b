/* SPDX-License-Identifier: MIT */
/* Description: what poll and select report, without waiting, for the
 * descriptor kinds besides sockets and pipes, as on glibc and Linux: a
 * pseudo-terminal's two sides empty, with input (POLLRDNORM too when
 * asked), under VMIN (not readable before VMIN bytes), after the other
 * side closed (POLLHUP, and POLLERR on the slave); a FIFO's reader
 * without a writer ever, with one, with data, after the writer left
 * (POLLHUP), and its writer; a FIFO opened read-write; an eventfd empty
 * and at its maximum (not writable). Each check runs after a thread was
 * made, so the library's threads are running. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "check.h"

/* poll's revents for fd, asked for events, and select's view of the same:
 * readable and writable as poll's POLLIN (or HUP/ERR) and POLLOUT say. */
static void expect_ready(int fd, short events, short revents)
{
    struct pollfd p = { .fd = fd, .events = events };
    EXPECT_EQ(poll(&p, 1, 0), revents != 0);
    EXPECT_EQ(p.revents, revents);
    fd_set rs, ws;
    FD_ZERO(&rs);
    FD_ZERO(&ws);
    if (events & POLLIN)
        FD_SET(fd, &rs);
    if (events & POLLOUT)
        FD_SET(fd, &ws);
    struct timeval tv = { 0, 0 };
    int readable = (events & POLLIN) && (revents & (POLLIN | POLLHUP | POLLERR));
    int writable = (events & POLLOUT) && (revents & (POLLOUT | POLLERR));
    EXPECT_EQ(select(fd + 1, &rs, &ws, NULL, &tv), readable + writable);
    EXPECT_EQ(FD_ISSET(fd, &rs) != 0, readable);
    EXPECT_EQ(FD_ISSET(fd, &ws) != 0, writable);
}

static void *nothing(void *arg)
{
    return arg;
}

static void terminals(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0) {
        perror("posix_openpt");
        exit(77);
    }
    EXPECT_EQ(grantpt(m), 0);
    EXPECT_EQ(unlockpt(m), 0);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    EXPECT(s >= 0);
    struct termios t;
    EXPECT_EQ(tcgetattr(s, &t), 0);
    cfmakeraw(&t);
    EXPECT_EQ(tcsetattr(s, TCSANOW, &t), 0);
    expect_ready(s, POLLIN | POLLOUT, POLLOUT);
    expect_ready(m, POLLIN | POLLOUT, POLLOUT);
    EXPECT_EQ(write(m, "x", 1), 1);
    sleep_ms(20);
    expect_ready(s, POLLIN | POLLPRI | POLLRDNORM, POLLIN | POLLRDNORM);
    t.c_cc[VMIN] = 4;
    EXPECT_EQ(tcsetattr(s, TCSANOW, &t), 0);
    expect_ready(s, POLLIN, 0); /* one byte of four */
    t.c_cc[VMIN] = 1;
    EXPECT_EQ(tcsetattr(s, TCSANOW, &t), 0);
    char buf[8];
    EXPECT_EQ(read(s, buf, sizeof buf), 1);
    EXPECT_EQ(close(s), 0);
    sleep_ms(20);
    expect_ready(m, POLLIN | POLLOUT | POLLRDHUP, POLLOUT | POLLHUP);
    s = open(ptsname(m), O_RDWR | O_NOCTTY);
    EXPECT(s >= 0);
    EXPECT_EQ(close(m), 0);
    sleep_ms(20);
    expect_ready(s, POLLIN | POLLOUT, POLLIN | POLLOUT | POLLERR | POLLHUP);
    EXPECT_EQ(close(s), 0);
}

static void fifos(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/compat_poll_kinds_%d", (int)getpid());
    unlink(path);
    EXPECT_EQ(mkfifo(path, 0600), 0);
    int r = open(path, O_RDONLY | O_NONBLOCK);
    EXPECT(r >= 0);
    expect_ready(r, POLLIN, 0); /* no writer ever: nothing to report */
    int w = open(path, O_WRONLY);
    EXPECT(w >= 0);
    expect_ready(r, POLLIN, 0);
    expect_ready(w, POLLIN | POLLOUT, POLLOUT);
    EXPECT_EQ(write(w, "y", 1), 1);
    expect_ready(r, POLLIN, POLLIN);
    EXPECT_EQ(close(w), 0);
    expect_ready(r, POLLIN | POLLRDHUP, POLLIN | POLLHUP);
    char buf[8];
    EXPECT_EQ(read(r, buf, sizeof buf), 1);
    expect_ready(r, POLLIN, POLLHUP);
    EXPECT_EQ(close(r), 0);
    int rw = open(path, O_RDWR);
    EXPECT(rw >= 0);
    expect_ready(rw, POLLIN | POLLOUT, POLLOUT);
    EXPECT_EQ(close(rw), 0);
    EXPECT_EQ(unlink(path), 0);
}

static void eventfds(void)
{
    int e = eventfd(0, 0);
    EXPECT(e >= 0);
    expect_ready(e, POLLIN | POLLOUT, POLLOUT);
    unsigned long long most = 0xfffffffffffffffeULL;
    EXPECT_EQ(write(e, &most, 8), 8);
    expect_ready(e, POLLIN | POLLOUT, POLLIN);
    EXPECT_EQ(close(e), 0);
}

int main(void)
{
    alarm(50);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, nothing, NULL), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    terminals();
    fifos();
    eventfds();
    puts("poll_kinds_as_glibc: ok");
    return 0;
}

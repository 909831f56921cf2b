/* SPDX-License-Identifier: MIT */
/* Description: read and write on a pollable descriptor that is neither a
 * socket nor a pipe (eventfd, timerfd) leave errno alone when they
 * succeed, as the kernel's calls through glibc do: the eventfd's refused
 * RWF_NOWAIT attempt left EOPNOTSUPP, and the attempt before a read parks
 * left EAGAIN. */
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "io/io_util.h"

#define MARK EDOM

static int efd;

static void *post_later(void *arg)
{
    (void)arg;
    cap_sleep_ns(5000000);
    uint64_t one = 1;
    CHECK_EQ(write(efd, &one, sizeof one), (ssize_t)sizeof one);
    return NULL;
}

int main(void)
{
    efd = eventfd(0, 0);
    CHECK(efd >= 0);
    uint64_t v = 1;
    errno = MARK;
    CHECK_EQ(write(efd, &v, sizeof v), (ssize_t)sizeof v); /* takes no RWF_NOWAIT */
    CHECK_EQ(errno, MARK);
    errno = MARK;
    CHECK_EQ(read(efd, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(errno, MARK);

    /* a read that parks until another thread writes */
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, post_later, NULL), 0);
    errno = MARK;
    CHECK_EQ(read(efd, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(errno, MARK);
    CHECK_EQ(v, 1);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    /* a read that parks until the timer expires */
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    CHECK(tfd >= 0);
    struct itimerspec its = { .it_value = { 0, 2000000 } };
    CHECK_EQ(timerfd_settime(tfd, 0, &its, NULL), 0);
    errno = MARK;
    CHECK_EQ(read(tfd, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(errno, MARK);
    CHECK_EQ(close(tfd), 0);
    CHECK_EQ(close(efd), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: blocking reads and writes of eventfds, timerfds and
 * inotify descriptors from threads answer as on glibc and Linux:
 *  - eventfd: a read waits for a write and takes the whole count; in
 *    semaphore mode three threads waiting each take one; a write that
 *    would pass the counter's maximum waits for a read (a thread of the
 *    same kernel thread, on the library with one worker); a read into
 *    fewer than 8 bytes and a write of 2^64 - 1 are EINVAL; EFD_NONBLOCK
 *    gives EAGAIN, and F_GETFL shows O_NONBLOCK only then; RWF_NOWAIT is
 *    taken for reads (EAGAIN when empty) and refused for writes; a child
 *    process made by fork reads it blocking;
 *  - timerfd: a read waits for the expiry and says how many passed;
 *    fewer than 8 bytes is EINVAL; TFD_NONBLOCK gives EAGAIN before it;
 *  - inotify: a read waits for the event and names the file; a buffer
 *    too small for it is EINVAL.
 * Every wait here depends on another thread, so a call that held up the
 * threads beside it never ends (the alarm fails the program). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

struct post {
    int fd;
    uint64_t value;
    pthread_t thread;
};

static void *post_later(void *arg)
{
    struct post *p = arg;
    sleep_ms(50);
    EXPECT_EQ(write(p->fd, &p->value, 8), 8);
    return NULL;
}

static void *take_one(void *arg)
{
    uint64_t v = 0;
    EXPECT_EQ(read(*(int *)arg, &v, 8), 8);
    EXPECT_EQ(v, 1);
    return NULL;
}

static void eventfds(void)
{
    int e = eventfd(0, 0);
    EXPECT(e >= 0);
    EXPECT_EQ(fcntl(e, F_GETFL) & O_NONBLOCK, 0);
    struct post p = { .fd = e, .value = 5 };
    EXPECT_EQ(pthread_create(&p.thread, NULL, post_later, &p), 0);
    uint64_t v = 0;
    EXPECT_EQ(read(e, &v, 8), 8); /* waits for the write */
    EXPECT_EQ(v, 5);
    EXPECT_EQ(pthread_join(p.thread, NULL), 0);

    char small[4];
    expect_fail(read(e, small, sizeof small), EINVAL);
    v = UINT64_MAX;
    expect_fail(write(e, &v, 8), EINVAL);

    /* A write past the maximum waits until a read empties the counter. */
    v = UINT64_MAX - 16;
    EXPECT_EQ(write(e, &v, 8), 8);
    p = (struct post){ .fd = e, .value = 32 };
    EXPECT_EQ(pthread_create(&p.thread, NULL, post_later, &p), 0);
    sleep_ms(100);
    EXPECT_EQ(read(e, &v, 8), 8);
    EXPECT_EQ(v, UINT64_MAX - 16);
    EXPECT_EQ(pthread_join(p.thread, NULL), 0);
    EXPECT_EQ(read(e, &v, 8), 8);
    EXPECT_EQ(v, 32);

    /* Inherited by a child, which reads it blocking. */
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        uint64_t got = 0;
        _exit(read(e, &got, 8) == 8 && got == 7 ? 0 : 1);
    }
    sleep_ms(50);
    v = 7;
    EXPECT_EQ(write(e, &v, 8), 8);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(close(e), 0);

    int s = eventfd(0, EFD_SEMAPHORE);
    EXPECT(s >= 0);
    pthread_t takers[3];
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(pthread_create(&takers[i], NULL, take_one, &s), 0);
    sleep_ms(50);
    v = 3;
    EXPECT_EQ(write(s, &v, 8), 8);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(pthread_join(takers[i], NULL), 0);
    EXPECT_EQ(close(s), 0);

    int w = eventfd(0, 0); /* RWF_NOWAIT: taken for reads, refused for writes */
    EXPECT(w >= 0);
    v = 1;
    struct iovec one = { &v, 8 };
    errno = 0;
    expect_fail(pwritev2(w, &one, 1, -1, RWF_NOWAIT), EOPNOTSUPP);
    errno = 0;
    expect_fail(preadv2(w, &one, 1, -1, RWF_NOWAIT), EAGAIN); /* nothing written */
    EXPECT_EQ(close(w), 0);

    int n = eventfd(0, EFD_NONBLOCK);
    EXPECT(n >= 0);
    EXPECT_EQ(fcntl(n, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    expect_fail(read(n, &v, 8), EAGAIN);
    EXPECT_EQ(close(n), 0);
}

static void timerfds(void)
{
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    EXPECT(t >= 0);
    struct itimerspec its = { .it_value = { 0, 50 * 1000000L } };
    EXPECT_EQ(timerfd_settime(t, 0, &its, NULL), 0);
    uint64_t n = 0;
    char small[4];
    expect_fail(read(t, small, sizeof small), EINVAL);
    EXPECT_EQ(read(t, &n, 8), 8); /* waits for the expiry */
    EXPECT_EQ(n, 1);
    EXPECT_EQ(close(t), 0);

    int nb = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    EXPECT(nb >= 0);
    its.it_value.tv_sec = 10;
    EXPECT_EQ(timerfd_settime(nb, 0, &its, NULL), 0);
    expect_fail(read(nb, &n, 8), EAGAIN);
    EXPECT_EQ(close(nb), 0);
}

static char dir[] = "/tmp/compat_event_fds_XXXXXX";

static void *create_later(void *arg)
{
    (void)arg;
    sleep_ms(50);
    char path[64];
    snprintf(path, sizeof path, "%s/made", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    EXPECT(fd >= 0);
    EXPECT_EQ(close(fd), 0);
    return NULL;
}

static void inotify(void)
{
    EXPECT(mkdtemp(dir) != NULL);
    int in = inotify_init();
    EXPECT(in >= 0);
    EXPECT(inotify_add_watch(in, dir, IN_CREATE) >= 0);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, create_later, NULL), 0);
    char buf[sizeof(struct inotify_event) + 64] __attribute__((aligned(8)));
    long r = read(in, buf, sizeof buf); /* waits for the event */
    EXPECT(r >= (long)sizeof(struct inotify_event));
    struct inotify_event *ev = (struct inotify_event *)buf;
    EXPECT(ev->mask & IN_CREATE);
    EXPECT_EQ(strcmp(ev->name, "made"), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);

    char path[64];
    snprintf(path, sizeof path, "%s/made", dir);
    EXPECT_EQ(unlink(path), 0); /* no watch for deletes: only the next create counts */
    EXPECT_EQ(pthread_create(&th, NULL, create_later, NULL), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    char tiny[sizeof(struct inotify_event)];
    expect_fail(read(in, tiny, sizeof tiny), EINVAL); /* the name does not fit */
    EXPECT_EQ(close(in), 0);
    EXPECT_EQ(unlink(path), 0);
    EXPECT_EQ(rmdir(dir), 0);
}

int main(void)
{
    alarm(50);
    eventfds();
    timerfds();
    inotify();
    puts("event_fds_as_glibc: ok");
    return 0;
}

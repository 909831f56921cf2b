/* SPDX-License-Identifier: MIT */
/* Description: POSIX AIO gives glibc's results: aio_write then aio_read
 * of a file (aio_error EINPROGRESS or 0, aio_return the count, the bytes
 * where they belong); lio_listio(LIO_WAIT) of several reads; aio_suspend
 * with a timeout on a read of an empty pipe times out (EAGAIN), and then
 * returns once another thread writes; SIGEV_SIGNAL notification carries
 * the value; aio_cancel of a request that ended says AIO_ALLDONE; a read
 * past the end returns 0. */
#include <aio.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void wait_done(struct aiocb *cb)
{
    const struct aiocb *list[1] = { cb };
    while (aio_error(cb) == EINPROGRESS)
        EXPECT(aio_suspend(list, 1, NULL) == 0 || errno == EINTR);
}

static int temp_file(void)
{
    char path[] = "/tmp/capaioXXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    EXPECT_EQ(unlink(path), 0);
    return fd;
}

static void write_then_read(void)
{
    int fd = temp_file();
    char data[4096], back[4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    struct aiocb w;
    memset(&w, 0, sizeof w);
    w.aio_fildes = fd;
    w.aio_buf = data;
    w.aio_nbytes = sizeof data;
    w.aio_offset = 4096;
    EXPECT_EQ(aio_write(&w), 0);
    wait_done(&w);
    EXPECT_EQ(aio_error(&w), 0);
    EXPECT_EQ(aio_return(&w), (ssize_t)sizeof data);
    EXPECT_EQ(aio_cancel(fd, &w), AIO_ALLDONE);

    struct aiocb r;
    memset(&r, 0, sizeof r);
    r.aio_fildes = fd;
    r.aio_buf = back;
    r.aio_nbytes = sizeof back;
    r.aio_offset = 4096;
    EXPECT_EQ(aio_read(&r), 0);
    wait_done(&r);
    EXPECT_EQ(aio_return(&r), (ssize_t)sizeof back);
    EXPECT_EQ(memcmp(data, back, sizeof data), 0);

    /* The hole before it reads as zeros; past the end, 0 bytes. */
    r.aio_offset = 0;
    r.aio_nbytes = 100;
    EXPECT_EQ(aio_read(&r), 0);
    wait_done(&r);
    EXPECT_EQ(aio_return(&r), 100);
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(back[i], 0);
    r.aio_offset = 1 << 20;
    EXPECT_EQ(aio_read(&r), 0);
    wait_done(&r);
    EXPECT_EQ(aio_return(&r), 0);

    /* lio_listio(LIO_WAIT): four reads, all done when it returns. */
    struct aiocb cbs[4];
    struct aiocb *list[4];
    char bufs[4][1024];
    for (int i = 0; i < 4; i++) {
        memset(&cbs[i], 0, sizeof cbs[i]);
        cbs[i].aio_fildes = fd;
        cbs[i].aio_buf = bufs[i];
        cbs[i].aio_nbytes = 1024;
        cbs[i].aio_offset = 4096 + i * 1024;
        cbs[i].aio_lio_opcode = LIO_READ;
        list[i] = &cbs[i];
    }
    EXPECT_EQ(lio_listio(LIO_WAIT, list, 4, NULL), 0);
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(aio_error(&cbs[i]), 0);
        EXPECT_EQ(aio_return(&cbs[i]), 1024);
        EXPECT_EQ(memcmp(bufs[i], data + i * 1024, 1024), 0);
    }
    EXPECT_EQ(close(fd), 0);
}

static int pipe_fds[2];

static void *late_writer(void *arg)
{
    (void)arg;
    struct timespec t = { 0, 30000000 };
    nanosleep(&t, NULL);
    EXPECT_EQ(write(pipe_fds[1], "late", 4), 4);
    return NULL;
}

static void suspend_on_a_pipe(void)
{
    EXPECT_EQ(pipe(pipe_fds), 0);
    char buf[16];
    struct aiocb r;
    memset(&r, 0, sizeof r);
    r.aio_fildes = pipe_fds[0];
    r.aio_buf = buf;
    r.aio_nbytes = sizeof buf;
    EXPECT_EQ(aio_read(&r), 0);
    const struct aiocb *list[1] = { &r };
    struct timespec ts = { 0, 10000000 };
    errno = 0;
    EXPECT_EQ(aio_suspend(list, 1, &ts), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(aio_error(&r), EINPROGRESS);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, late_writer, NULL), 0);
    wait_done(&r);
    EXPECT_EQ(aio_return(&r), 4);
    EXPECT_EQ(memcmp(buf, "late", 4), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(close(pipe_fds[0]), 0);
    EXPECT_EQ(close(pipe_fds[1]), 0);
}

static atomic_int notified, notified_value;

static void on_done(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    atomic_store(&notified_value, si->si_value.sival_int);
    atomic_store(&notified, si->si_code == SI_ASYNCIO ? 1 : 2);
}

static void signal_notification(void)
{
    install_action(SIGRTMIN, on_done);
    int fd = temp_file();
    struct aiocb w;
    memset(&w, 0, sizeof w);
    w.aio_fildes = fd;
    w.aio_buf = "notify";
    w.aio_nbytes = 6;
    w.aio_sigevent.sigev_notify = SIGEV_SIGNAL;
    w.aio_sigevent.sigev_signo = SIGRTMIN;
    w.aio_sigevent.sigev_value.sival_int = 99;
    EXPECT_EQ(aio_write(&w), 0);
    wait_done(&w);
    EXPECT_EQ(aio_return(&w), 6);
    while (atomic_load(&notified) == 0) { /* the test's timeout catches a lost one */
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    EXPECT_EQ(atomic_load(&notified), 1); /* SI_ASYNCIO */
    EXPECT_EQ(atomic_load(&notified_value), 99);
    EXPECT_EQ(close(fd), 0);
}

int main(void)
{
    write_then_read();
    suspend_on_a_pipe();
    signal_notification();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: blocking writes to a FIFO (made with mkfifo and opened
 * here, so not a pipe the thread package made) from threads answer as on
 * glibc and Linux:
 *  - a 256 KiB write, far more than the FIFO holds, completes while the
 *    main thread reads the other end (all of it, in order), through a
 *    descriptor opened blocking and through one opened O_NONBLOCK and
 *    made blocking after;
 *  - writes of PIPE_BUF bytes from four threads at once are never
 *    interleaved (POSIX's atomic writes);
 *  - a caught signal (no SA_RESTART) ends a write blocked on a full FIFO
 *    with the count it had written, which is what the reader then gets;
 *  - preadv2/pwritev2 with RWF_NOWAIT are refused (EOPNOTSUPP);
 *  - a write with no reader left is EPIPE (SIGPIPE ignored).
 * Every wait here depends on another thread, so a call that held up the
 * threads beside it never ends (the alarm fails the program). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

static char path[64];
static int rd, wr, wr2;

static void open_fifo(void)
{
    snprintf(path, sizeof path, "/tmp/compat_fifo_%d", (int)getpid());
    unlink(path);
    EXPECT_EQ(mkfifo(path, 0600), 0);
    rd = open(path, O_RDONLY | O_NONBLOCK); /* no writer yet: do not wait */
    EXPECT(rd >= 0);
    wr = open(path, O_WRONLY);
    EXPECT(wr >= 0);
    EXPECT_EQ(fcntl(rd, F_SETFL, 0), 0);
    wr2 = open(path, O_WRONLY | O_NONBLOCK); /* made blocking after the open */
    EXPECT(wr2 >= 0);
    EXPECT_EQ(fcntl(wr2, F_SETFL, 0), 0);
    EXPECT_EQ(unlink(path), 0);
}

enum { BIG = 256 * 1024, WRITERS = 4, RECORDS = 64 };
static char big[BIG];

static void *big_writer(void *arg)
{
    EXPECT_EQ(write(*(int *)arg, big, BIG), BIG);
    return NULL;
}

static void read_all(char *into, size_t n)
{
    for (size_t have = 0; have < n;) {
        long r = read(rd, into + have, n - have);
        EXPECT(r > 0);
        have += (size_t)r;
    }
}

static void big_write(int *fd)
{
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char)(i * 7 + i / 4096);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, big_writer, fd), 0);
    static char got[BIG];
    read_all(got, BIG);
    EXPECT_EQ(memcmp(got, big, BIG), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
}

static void *record_writer(void *arg)
{
    char rec[PIPE_BUF];
    memset(rec, (char)(long)arg, sizeof rec);
    for (int i = 0; i < RECORDS; i++)
        EXPECT_EQ(write(wr, rec, sizeof rec), (long)sizeof rec);
    return NULL;
}

static void atomic_records(void)
{
    pthread_t th[WRITERS];
    for (long i = 0; i < WRITERS; i++)
        EXPECT_EQ(pthread_create(&th[i], NULL, record_writer, (void *)('a' + i)), 0);
    int count[WRITERS] = { 0 };
    char rec[PIPE_BUF];
    for (int n = 0; n < WRITERS * RECORDS; n++) {
        read_all(rec, sizeof rec);
        EXPECT(rec[0] >= 'a' && rec[0] < 'a' + WRITERS);
        for (size_t i = 1; i < sizeof rec; i++)
            EXPECT_EQ(rec[i], rec[0]);
        count[rec[0] - 'a']++;
    }
    for (int i = 0; i < WRITERS; i++) {
        EXPECT_EQ(pthread_join(th[i], NULL), 0);
        EXPECT_EQ(count[i], RECORDS);
    }
}

static void on_signal(int sig)
{
    (void)sig;
}

static volatile int writing;
static long written;

static void *blocked_writer(void *arg)
{
    (void)arg;
    writing = 1;
    written = write(wr, big, BIG); /* nobody reads */
    return NULL;
}

static void interrupted(void)
{
    install_handler(SIGUSR1, on_signal, 0);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, blocked_writer, NULL), 0);
    while (!writing)
        sleep_ms(1);
    sleep_ms(100);
    EXPECT_EQ(pthread_kill(th, SIGUSR1), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    EXPECT(written > 0 && written < BIG);
    EXPECT_EQ(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
    long drained = 0, r;
    char buf[4096];
    while ((r = read(rd, buf, sizeof buf)) > 0)
        drained += r;
    EXPECT_EQ(drained, written);
    EXPECT_EQ(fcntl(rd, F_SETFL, 0), 0);
}

/* preadv2/pwritev2 with RWF_NOWAIT: a FIFO refuses the flag, whichever
 * way it was opened. */
static void nowait_refused(void)
{
    char c = 'x';
    struct iovec v = { &c, 1 };
    errno = 0;
    expect_fail(pwritev2(wr, &v, 1, -1, RWF_NOWAIT), EOPNOTSUPP);
    errno = 0;
    expect_fail(pwritev2(wr2, &v, 1, -1, RWF_NOWAIT), EOPNOTSUPP);
    errno = 0;
    expect_fail(preadv2(rd, &v, 1, -1, RWF_NOWAIT), EOPNOTSUPP);
}

static void no_reader(void)
{
    signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(close(rd), 0);
    errno = 0;
    expect_fail(write(wr, "x", 1), EPIPE);
    expect_fail(write(wr2, "x", 1), EPIPE);
    EXPECT_EQ(close(wr), 0);
    EXPECT_EQ(close(wr2), 0);
}

int main(void)
{
    alarm(50);
    open_fifo();
    big_write(&wr);
    big_write(&wr2);
    atomic_records();
    interrupted();
    nowait_refused();
    no_reader();
    puts("fifo_writes_as_glibc: ok");
    return 0;
}

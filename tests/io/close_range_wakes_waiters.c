/* SPDX-License-Identifier: MIT */
/* Description: descriptors closed by close_range, closefrom and dup2/dup3
 * onto a number go the way of close(): threads blocked on them wake with
 * EBADF, and the reused number never delivers a stale event (a reader on
 * the new file waits for its own data). close_range with
 * CLOSE_RANGE_CLOEXEC closes nothing and wakes nobody; nor does a
 * close_range the kernel refuses (a flag it does not know: EINVAL), which
 * once woke the waiters with EBADF and forgot the descriptors' records
 * (a blocking read then said EAGAIN); a failed dup2 or dup3 leaves the
 * waiter alone; CLOSE_RANGE_UNSHARE is refused on a user thread (it would
 * split the descriptor table of a whole worker). */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>

#include "io/io_util.h"

enum { N = 4 };

struct waiter {
    int fd;
    long result;
    int err;
    char c;
    atomic_int in;
};

static void *reader(void *arg)
{
    struct waiter *w = arg;
    atomic_store(&w->in, 1);
    w->result = read(w->fd, &w->c, 1);
    w->err = errno;
    return NULL;
}

static cap_thread_t start(struct waiter *w, int fd)
{
    w->fd = fd;
    w->result = -2;
    atomic_store(&w->in, 0);
    cap_thread_t t = spawn(reader, w);
    while (!atomic_load(&w->in))
        cap_yield();
    return t;
}

static void settle(void)
{
    cap_sleep_ns(20000000); /* let readers reach their waits (either order is correct) */
}

static void expect_ebadf(struct waiter *w, cap_thread_t t)
{
    join(t);
    CHECK_EQ(w->result, -1);
    CHECK_EQ(w->err, EBADF);
}

/* Moves fd to the lowest free number >= at. */
static int move_to(int fd, int at)
{
    int n = fcntl(fd, F_DUPFD, at);
    CHECK_EQ(n, at);
    CHECK_EQ(close(fd), 0);
    return n;
}

/* N pipes on the numbers BASE, BASE + 1, ... (above whatever the runtime
 * opens for itself); returns BASE. */
enum { BASE = 600 };
static int pipes(int p[N][2])
{
    for (int i = 0; i < N; i++) {
        int q[2];
        CHECK_EQ(pipe(q), 0);
        p[i][0] = move_to(q[0], BASE + 2 * i);
        p[i][1] = move_to(q[1], BASE + 2 * i + 1);
    }
    return BASE;
}

static void reuse_check(int number)
{
    /* The number names a fresh pipe now; its reader must wait for its
     * own byte, not be woken by anything of the old life. */
    int q[2];
    CHECK_EQ(pipe(q), 0);
    if (q[0] != number) {
        CHECK_EQ(dup2(q[0], number), number);
        CHECK_EQ(close(q[0]), 0);
    }
    struct waiter w;
    cap_thread_t t = start(&w, number);
    settle();
    CHECK_EQ(w.result, -2);
    CHECK_EQ(write(q[1], "n", 1), 1);
    join(t);
    CHECK_EQ(w.result, 1);
    CHECK_EQ(w.c, 'n');
    CHECK_EQ(close(number), 0);
    CHECK_EQ(close(q[1]), 0);
}

int main(void)
{
    static struct waiter w[N];
    cap_thread_t t[N];
    int p[N][2];
    signal(SIGPIPE, SIG_IGN);

    /* close_range over every read and write end. */
    int lo = pipes(p);
    for (int i = 0; i < N; i++)
        t[i] = start(&w[i], p[i][0]);
    settle();
    CHECK_EQ(close_range((unsigned)lo, (unsigned)p[N - 1][1], 0), 0);
    for (int i = 0; i < N; i++)
        expect_ebadf(&w[i], t[i]);
    reuse_check(lo);

    /* CLOSE_RANGE_CLOEXEC: nothing closed, nobody woken. */
    lo = pipes(p);
    t[0] = start(&w[0], p[0][0]);
    settle();
    CHECK_EQ(close_range((unsigned)lo, (unsigned)p[N - 1][1], CLOSE_RANGE_CLOEXEC), 0);
    CHECK_EQ(w[0].result, -2);
    CHECK_EQ(write(p[0][1], "c", 1), 1);
    join(t[0]);
    CHECK_EQ(w[0].result, 1);
    CHECK_EQ(fcntl(p[0][0], F_GETFD), FD_CLOEXEC);

    /* Refused by the kernel as a whole: nothing closed, nobody woken, the
     * records kept (the pipe stays blocking for the application). */
    t[0] = start(&w[0], p[0][0]);
    settle();
    CHECK_EQ(close_range((unsigned)lo, (unsigned)p[N - 1][1], 1u << 7), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(w[0].result, -2);
    CHECK_EQ(fcntl(p[0][0], F_GETFL) & O_NONBLOCK, 0);
    CHECK_EQ(write(p[0][1], "d", 1), 1);
    join(t[0]);
    CHECK_EQ(w[0].result, 1);
    t[0] = start(&w[0], p[0][0]); /* blocking still: waits for its byte */
    settle();
    CHECK_EQ(w[0].result, -2);
    CHECK_EQ(write(p[0][1], "e", 1), 1);
    join(t[0]);
    CHECK_EQ(w[0].result, 1);
    CHECK_EQ(w[0].c, 'e');

    /* CLOSE_RANGE_UNSHARE on a user thread. */
    CHECK_EQ(close_range((unsigned)lo, (unsigned)lo, CLOSE_RANGE_UNSHARE), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_GE(fcntl(lo, F_GETFD), 0);

    /* closefrom: everything from lo up (only this test's pipes). */
    for (int i = 0; i < N; i++)
        t[i] = start(&w[i], p[i][0]);
    settle();
    closefrom(lo);
    for (int i = 0; i < N; i++)
        expect_ebadf(&w[i], t[i]);
    CHECK_EQ(fcntl(lo, F_GETFD), -1);
    reuse_check(lo);

    /* dup2 and dup3 onto a number someone waits on. */
    int a[2], b[2];
    CHECK_EQ(pipe(a), 0);
    CHECK_EQ(pipe(b), 0);
    t[0] = start(&w[0], a[0]);
    settle();
    CHECK_EQ(dup2(1 << 20, a[0]), -1); /* a bad source: a[0] stays, so does its waiter */
    CHECK_EQ(errno, EBADF);
    CHECK_EQ(dup3(a[0], a[0], 0), -1);
    CHECK_EQ(errno, EINVAL);
    settle();
    CHECK_EQ(w[0].result, -2);
    CHECK_EQ(dup2(b[0], a[0]), a[0]);
    expect_ebadf(&w[0], t[0]);
    t[1] = start(&w[1], a[0]); /* a[0] is b's read end now */
    settle();
    CHECK_EQ(write(a[1], "o", 1), -1); /* the old pipe lost its reader */
    CHECK_EQ(errno, EPIPE);
    CHECK_EQ(w[1].result, -2);
    CHECK_EQ(write(b[1], "b", 1), 1);
    join(t[1]);
    CHECK_EQ(w[1].result, 1);
    CHECK_EQ(w[1].c, 'b');

    t[2] = start(&w[2], b[0]);
    settle();
    CHECK_EQ(dup3(a[1], b[0], O_CLOEXEC), b[0]);
    expect_ebadf(&w[2], t[2]);
    return 0;
}

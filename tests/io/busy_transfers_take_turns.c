/* SPDX-License-Identifier: MIT */
/* Description: a thread whose transfers never have to wait still lets
 * the other threads of its worker run. A pipe and a socketpair are filled
 * before a reader starts, so none of its reads parks, and a writer writes
 * into a pipe or a socket with room for all it writes; meanwhile a ticker
 * counts its turns. Each busy thread must have yielded at least once per
 * CAP__IO_TURN_MAX (64, src/io/io.h) transfers: the ticker ran at least
 * that many times. Before the rule, on one worker, the ticker did not run
 * at all until the busy thread finished.
 * The count is checked on one worker only: with two, the ticker may run
 * on the other worker, where its turns say nothing about the busy
 * thread's yields (and a loaded machine may not run that worker
 * meanwhile: a CI run under ASan failed so). The two-worker runs still
 * check every transfer, under CAP_MIGRATE=1 with threads free to resume
 * on either worker. */
#include <stdatomic.h>
#include <string.h>

#include "io/io_util.h"

enum { TURN_MAX = 64, CHUNK = 16, TRANSFERS = 4096, SOCK_WRITES = 256 };

static struct ticker tk;

struct busy {
    int fd, n;
};

/* Reads n chunks that are all there already. */
static void *reader(void *arg)
{
    struct busy *b = arg;
    char buf[CHUNK];
    for (int i = 0; i < b->n; i++)
        CHECK_EQ(read(b->fd, buf, sizeof buf), (ssize_t)sizeof buf);
    return NULL;
}

/* Writes n chunks into a descriptor with room for them all. */
static void *writer(void *arg)
{
    struct busy *b = arg;
    char buf[CHUNK];
    memset(buf, 'w', sizeof buf);
    for (int i = 0; i < b->n; i++)
        CHECK_EQ(write(b->fd, buf, sizeof buf), (ssize_t)sizeof buf);
    return NULL;
}

static void fill(int fd)
{
    static char data[CHUNK * TRANSFERS];
    memset(data, 'd', sizeof data);
    size_t done = 0;
    while (done < sizeof data) {
        ssize_t n = write(fd, data + done, sizeof data - done);
        CHECK_GE(n, 1);
        done += (size_t)n;
    }
}

/* Runs fn for n transfers on fd beside the ticker; checks that the ticker
 * had a turn for every TURN_MAX of them. */
static void check_turns(void *(*fn)(void *), int fd, int n)
{
    atomic_store(&tk.stop, 0);
    atomic_store(&tk.ticks, 0);
    cap_thread_t t = spawn(ticker_run, &tk);
    while (atomic_load(&tk.ticks) == 0) /* the ticker is running */
        cap_yield();
    long before = atomic_load(&tk.ticks);
    struct busy b = { fd, n };
    join(spawn(fn, &b));
    if (cap_worker_count() == 1)
        CHECK_GE(atomic_load(&tk.ticks) - before, n / TURN_MAX);
    atomic_store(&tk.stop, 1);
    join(t);
}

static void big_buffers(int sv[2])
{
    int big = 1 << 20; /* the kernel caps it at wmem_max/rmem_max, doubled */
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big), 0);
    CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big), 0);
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_GE(fcntl(p[1], F_SETPIPE_SZ, CHUNK * TRANSFERS), CHUNK * TRANSFERS);
    fill(p[1]);
    check_turns(reader, p[0], TRANSFERS);
    /* Now empty: room for every write. */
    check_turns(writer, p[1], TRANSFERS);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    big_buffers(sv);
    fill(sv[0]);
    check_turns(reader, sv[1], TRANSFERS);
    /* Each small write to a Unix stream socket is a buffer of its own,
     * charged at ~1 KiB against SO_SNDBUF: a few hundred fit. */
    check_turns(writer, sv[0], SOCK_WRITES);
    return 0;
}

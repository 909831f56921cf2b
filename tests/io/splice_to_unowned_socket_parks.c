/* SPDX-License-Identifier: MIT */
/* Description: splice of a full 1 MiB pipe into a blocking socket the
 * runtime does not own (made by a raw socketpair call here, as an
 * inherited or received one is), several times the socket's buffer,
 * parks only the caller until the peer, a thread of the same worker, has
 * taken it; the bytes arrive in order. A splice from an empty pipe into
 * it parks until a writer fills the pipe. Before, the call was made on
 * the worker once the socket was writable, and the kernel's send to a
 * blocking socket returns only when all it was given is queued: on one
 * worker the peer never ran. */
#include <fcntl.h>

#include "io/io_util.h"

enum { PIPE_BYTES = 1 << 20, LATE_BYTES = 100 };

static int sv[2], p[2];

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 13 + i / 4096);
}

static void *drain(void *arg)
{
    size_t want = (size_t)(uintptr_t)arg;
    static unsigned char buf[65536];
    size_t got = 0;
    while (got < want) {
        size_t ask = want - got < sizeof buf ? want - got : sizeof buf;
        ssize_t r = read(sv[1], buf, ask);
        CHECK_GT(r, 0);
        for (ssize_t i = 0; i < r; i++)
            CHECK_EQ(buf[i], pattern(got + (size_t)i));
        got += (size_t)r;
    }
    return NULL;
}

static void *late_writer(void *arg)
{
    (void)arg;
    cap_sleep_ns(2000000); /* the splice parks first */
    unsigned char late[LATE_BYTES];
    for (size_t i = 0; i < sizeof late; i++)
        late[i] = pattern(i);
    CHECK_EQ(write(p[1], late, sizeof late), (ssize_t)sizeof late);
    return NULL;
}

int main(void)
{
    CHECK_EQ(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(kernel_nonblock(sv[0]), 0);
    CHECK_EQ(pipe(p), 0);
    if (fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES) < PIPE_BYTES)
        SKIP("a 1 MiB pipe is refused here (fs.pipe-max-size)");
    static unsigned char fill[PIPE_BYTES];
    for (size_t i = 0; i < sizeof fill; i++)
        fill[i] = pattern(i);
    CHECK_EQ(write(p[1], fill, sizeof fill), (ssize_t)sizeof fill);

    cap_thread_t t = spawn(drain, (void *)(uintptr_t)PIPE_BYTES);
    size_t sent = 0;
    while (sent < PIPE_BYTES) {
        ssize_t r = splice(p[0], NULL, sv[0], NULL, PIPE_BYTES - sent, 0);
        CHECK_GT(r, 0);
        sent += (size_t)r;
    }
    join(t);

    t = spawn(drain, (void *)(uintptr_t)LATE_BYTES);
    cap_thread_t w = spawn(late_writer, NULL);
    CHECK_EQ(splice(p[0], NULL, sv[0], NULL, LATE_BYTES, 0), LATE_BYTES);
    join(w);
    join(t);

    int fds[] = { p[0], p[1], sv[0], sv[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
    return 0;
}

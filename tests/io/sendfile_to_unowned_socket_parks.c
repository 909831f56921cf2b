/* SPDX-License-Identifier: MIT */
/* Description: sendfile of a file much larger than the socket's buffer
 * into a blocking socket the runtime does not own (made by a raw
 * socketpair call here, as an inherited or received one is) parks only
 * the caller until the peer, a thread of the same worker, has taken it
 * all; the bytes and the offset are right. A second one into the same
 * socket after it went through the runtime's hands and back (sent with
 * SCM_RIGHTS) does the same, and so does one into a loopback TCP
 * connection made by raw calls. Before, the kernel's sendfile was made on
 * the worker once the socket was writable, and it returns only when it
 * has sent everything: on one worker the reader never ran. */
#include <sys/sendfile.h>

#include "io/io_util.h"

enum { FILE_BYTES = 4 << 20 };

static int sv[2];

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + i / 4096);
}

static void *drain(void *arg)
{
    (void)arg;
    static unsigned char buf[65536];
    size_t got = 0;
    while (got < FILE_BYTES) {
        ssize_t r = read(sv[1], buf, sizeof buf);
        CHECK_GT(r, 0);
        for (ssize_t i = 0; i < r; i++)
            CHECK_EQ(buf[i], pattern((got + (size_t)i) % FILE_BYTES));
        got += (size_t)r;
    }
    CHECK_EQ(got, FILE_BYTES);
    return NULL;
}

static void send_whole(int file)
{
    cap_thread_t t = spawn(drain, NULL);
    off_t off = 0;
    CHECK_EQ(sendfile(sv[0], file, &off, FILE_BYTES), FILE_BYTES);
    CHECK_EQ(off, FILE_BYTES);
    join(t);
}

int main(void)
{
    int file = unlinked_temp_file(0);
    static unsigned char chunk[65536];
    for (size_t at = 0; at < FILE_BYTES; at += sizeof chunk) {
        for (size_t i = 0; i < sizeof chunk; i++)
            chunk[i] = pattern(at + i);
        CHECK_EQ(pwrite(file, chunk, sizeof chunk, (off_t)at), (ssize_t)sizeof chunk);
    }
    CHECK_EQ(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(kernel_nonblock(sv[0]), 0);
    send_whole(file);

    /* Made by the runtime this time, then given back. */
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(kernel_nonblock(sv[0]), 1);
    int carrier[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, carrier), 0);
    send_fd(carrier[0], sv[0]);
    CHECK_EQ(kernel_nonblock(sv[0]), 0);
    CHECK_EQ(close(recv_fd(carrier[1])), 0);
    send_whole(file);

    /* TCP over loopback, made by raw calls. */
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    int port;
    int l = raw_tcp_listener(1, &port);
    sv[0] = raw_tcp_connect(port, NULL);
    sv[1] = (int)syscall(SYS_accept4, l, NULL, NULL, 0);
    CHECK_GE(sv[1], 0);
    CHECK_EQ(close(l), 0);
    send_whole(file);

    int fds[] = { carrier[0], carrier[1], sv[0], sv[1], file };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
    return 0;
}

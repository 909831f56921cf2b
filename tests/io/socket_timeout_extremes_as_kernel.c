/* SPDX-License-Identifier: MIT */
/* Description: SO_RCVTIMEO values at the ends of the range act as the
 * kernel sets them (sock_set_timeout): a negative tv_sec times out at
 * once (recv fails with EAGAIN without waiting), and a timeout past 2^64
 * ns (18446744074 s) waits until data comes. The runtime's copy of the
 * timeout was a wrapping multiplication: -1 s became ~584 years (recv
 * waited for data) and 18446744074 s became 0.29 s (recv failed with
 * EAGAIN before the data, sent a second later). */
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "io/io_util.h"

static int sv[2];
static atomic_int reading;

static void *late_writer(void *arg)
{
    (void)arg;
    while (!atomic_load(&reading))
        cap_sleep_ns(1000000);
    cap_sleep_ns(1000000000); /* past the wrapped 0.29 s */
    CHECK_EQ(write(sv[1], "x", 1), 1);
    return NULL;
}

static void set_rcvtimeo(time_t sec)
{
    struct timeval tv = { sec, 0 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char c;

    /* Negative: at once. The writer sends only after a second, so a wait
     * would get its byte. */
    set_rcvtimeo(-1);
    atomic_store(&reading, 0);
    cap_thread_t t = spawn(late_writer, NULL);
    atomic_store(&reading, 1);
    errno = 0;
    CHECK_EQ(recv(sv[0], &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    join(t);
    set_rcvtimeo(0); /* none */
    CHECK_EQ(read(sv[0], &c, 1), 1);

    /* Too long to count: for ever, so the late byte comes. */
    set_rcvtimeo((time_t)18446744074LL);
    atomic_store(&reading, 0);
    t = spawn(late_writer, NULL);
    atomic_store(&reading, 1);
    CHECK_EQ(recv(sv[0], &c, 1, 0), 1);
    CHECK_EQ(c, 'x');
    join(t);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a program that closes "every descriptor above stderr", as
 * daemons do (closefrom(3), close_range(3, ~0U, 0), or close() in a loop
 * ignoring errors), must not close the runtime's own descriptors (the
 * epoll or io_uring instance, eventfds): after each way, a thread blocked
 * on a new pipe is still woken by a write from another thread, a socket
 * pair still carries data both ways, and a sleep still returns. Without
 * the protection the parked reader is never woken and the test times out.
 * A close() of one of the runtime's descriptors fails with EBADF. */
#include <fcntl.h>
#include <sys/socket.h>

#include "io/io_util.h"

/* One round of I/O that needs the backend: a reader parks on an empty
 * pipe and the write must wake it; the same through a socket pair. */
static void io_still_works(char token)
{
    parked_pipe_read_is_woken(token);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cap_thread_t t = spawn(read_one_byte, &sv[1]);
    for (int i = 0; i < 10; i++)
        cap_yield();
    CHECK_EQ(write(sv[0], &token, 1), 1);
    CHECK_EQ((intptr_t)join(t), token);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);

    CHECK_EQ(cap_usleep(1000), 0);
}

int main(void)
{
    io_still_works('a'); /* the backend is up and its descriptors exist */

    closefrom(3);
    /* What is still open above stderr is the runtime's: close() refuses
     * each with EBADF and leaves it open. There is at least the signal
     * eventfd and the backend's kick eventfd. */
    int survivors = 0;
    for (int fd = 3; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        survivors++;
        errno = 0;
        CHECK_EQ(close(fd), -1);
        CHECK_EQ(errno, EBADF);
        CHECK_GE(fcntl(fd, F_GETFD), 0);
    }
    CHECK_GE(survivors, 2);
    io_still_works('b');

    CHECK_EQ(close_range(3, ~0U, 0), 0);
    io_still_works('c');

    for (int fd = 3; fd < 1024; fd++)
        close(fd); /* errors ignored, as daemons do */
    io_still_works('d');

    /* CLOSE_RANGE_CLOEXEC over the runtime's descriptors is harmless too. */
    CHECK_EQ(close_range(3, ~0U, CLOSE_RANGE_CLOEXEC), 0);
    io_still_works('e');
    return 0;
}

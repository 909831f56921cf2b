/* SPDX-License-Identifier: MIT */
/* Description: a program run by exec sees the O_NONBLOCK the application
 * set on the descriptors it inherits, not the runtime's: a socket, a
 * socketpair end moved by dup2 to a high number, a listening socket and a
 * pipe, all made blocking, arrive blocking; one made with SOCK_NONBLOCK
 * arrives non-blocking. Before, every socket and pipe the runtime created
 * arrived non-blocking (a blocking read there failed with EAGAIN). An
 * exec that fails leaves the descriptors working: a blocking recv on one
 * still parks only its thread until data comes. */
#include <sys/syscall.h>

#include "io/io_util.h"

enum { HIGH = 40 };

static int sv[2];

static void *late_write(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        cap_yield();
    CHECK_EQ(write(sv[1], "y", 1), 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 6) { /* the program exec ran: blocking, blocking, ..., non-blocking */
        for (int i = 1; i < 5; i++)
            CHECK_EQ(kernel_nonblock(atoi(argv[i])), 0);
        CHECK_EQ(kernel_nonblock(atoi(argv[5])), 1);
        return 0;
    }
    int p[2], nb[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, nb), 0);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(l, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(listen(l, 4), 0);
    int high = dup2(sv[1], HIGH);
    CHECK_EQ(high, HIGH);

    /* A failed exec first: the descriptors still serve their threads. */
    char *none[] = { "none", NULL };
    errno = 0;
    CHECK_EQ(execv("/nonexistent/program", none), -1);
    CHECK_EQ(errno, ENOENT);
    cap_thread_t t = spawn(late_write, NULL);
    char c;
    CHECK_EQ(recv(sv[0], &c, 1, 0), 1);
    CHECK_EQ(c, 'y');
    join(t);

    char args[5][16];
    int fds[5] = { sv[0], high, l, p[0], nb[0] };
    for (int i = 0; i < 5; i++)
        snprintf(args[i], sizeof args[i], "%d", fds[i]);
    execl("/proc/self/exe", argv[0], args[0], args[1], args[2], args[3], args[4], (char *)NULL);
    CHECK(0); /* not reached */
    return 1;
}

/* SPDX-License-Identifier: MIT */
/* Description: calls that succeed leave errno as the program set it, as
 * glibc's do, where the library does work of its own underneath: a
 * blocking connect made as a non-blocking one (its EINPROGRESS came
 * back), getaddrinfo on a pool thread (that thread's errno, 0, came back:
 * no function may set errno to 0), and the first read of a stream over a
 * pipe (the isatty probe's ENOTTY came back). A program's later perror
 * then named the wrong error. */
#include <netdb.h>

#include "io/io_util.h"

#define MARK EDOM

int main(void)
{
    /* a blocking connect to a listener on loopback (tcp_connect: a socket
     * and the connect, which succeeds, or -1) */
    int port;
    int ls = tcp_listener(SOCK_STREAM, 4, &port);
    errno = MARK;
    int cs = tcp_connect(port);
    CHECK_GE(cs, 0);
    CHECK_EQ(errno, MARK);
    int as = accept(ls, NULL, NULL);
    CHECK(as >= 0);
    CHECK_EQ(close(as), 0);
    CHECK_EQ(close(cs), 0);
    CHECK_EQ(close(ls), 0);

    /* a lookup that needs no name service */
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
    struct addrinfo *ai = NULL;
    errno = MARK;
    CHECK_EQ(getaddrinfo("127.0.0.1", "80", &hints, &ai), 0);
    CHECK_EQ(errno, MARK);
    freeaddrinfo(ai);

    /* the first read of a stream over a pipe */
    int pfd[2];
    CHECK_EQ(pipe(pfd), 0);
    CHECK_EQ(write(pfd[1], "line\n", 5), 5);
    FILE *f = fdopen(pfd[0], "r");
    CHECK(f != NULL);
    char buf[16];
    errno = MARK;
    CHECK(fgets(buf, sizeof buf, f) != NULL);
    CHECK_EQ(errno, MARK);
    CHECK_EQ(strcmp(buf, "line\n"), 0);
    CHECK_EQ(fclose(f), 0);
    CHECK_EQ(close(pfd[1]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a socket accepted from a listener with SO_RCVTIMEO has the
 * timeout the kernel gave it: a TCP one the listener's (its recv on an
 * empty socket fails with EAGAIN), a Unix one none (connect made it
 * afresh; its recv waits until data comes, past the listener's timeout).
 * Before, the runtime copied the listener's timeouts to every accepted
 * socket, and the Unix one's recv failed with EAGAIN the kernel never
 * gives there. */
#include <sys/un.h>

#include "io/io_util.h"

static int client;

static void *late_write(void *arg)
{
    (void)arg;
    cap_usleep(250000); /* well past the listener's 50 ms */
    CHECK_EQ(write(client, "x", 1), 1);
    return NULL;
}

int main(void)
{
    struct timeval tv = { 0, 50000 };
    char c;

    /* Unix: no timeout on the accepted socket. */
    struct sockaddr_un ua = { .sun_family = AF_UNIX };
    snprintf(ua.sun_path, sizeof ua.sun_path, "/tmp/cap-accepted-timeo-%d", (int)getpid());
    unlink(ua.sun_path);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(l, 0);
    CHECK_EQ(bind(l, (struct sockaddr *)&ua, sizeof ua), 0);
    CHECK_EQ(listen(l, 4), 0);
    CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    client = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_EQ(connect(client, (struct sockaddr *)&ua, sizeof ua), 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    unlink(ua.sun_path);
    cap_thread_t t = spawn(late_write, NULL);
    CHECK_EQ(recv(s, &c, 1, 0), 1);
    join(t);
    close(s);
    close(client);
    close(l);

    /* TCP: the listener's timeout. */
    l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(l, 0);
    struct sockaddr_in ia = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof ia;
    CHECK_EQ(bind(l, (struct sockaddr *)&ia, sizeof ia), 0);
    CHECK_EQ(getsockname(l, (struct sockaddr *)&ia, &len), 0);
    CHECK_EQ(listen(l, 4), 0);
    CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    client = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_EQ(connect(client, (struct sockaddr *)&ia, sizeof ia), 0);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    errno = 0;
    CHECK_EQ(recv(s, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    close(s);
    close(client);
    close(l);
    return 0;
}

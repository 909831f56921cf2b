/* SPDX-License-Identifier: MIT */
/* Description: recvfrom's address is copied out as Linux's
 * move_addr_to_user does, after the datagram was taken: an address with
 * a NULL length pointer gives EFAULT and a negative length EINVAL, each
 * consuming the datagram (the wrapper returned the datagram and ignored
 * the address for the first, and left the datagram queued for the
 * second); a short length copies that many bytes and reports the full
 * length; the normal case fills the sender's address. */
#include <string.h>

#include "io/io_util.h"

static void send_one(int to, const char *msg)
{
    CHECK_EQ(send(to, msg, strlen(msg), 0), (ssize_t)strlen(msg));
}

static void check_consumed(int s)
{
    char c;
    errno = 0;
    CHECK_EQ(recv(s, &c, 1, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);
}

int main(void)
{
    int port;
    int s = tcp_listener(SOCK_DGRAM, 0, &port);
    int c = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(connect(c, (struct sockaddr *)&to, sizeof to), 0);
    struct sockaddr_in me;
    socklen_t melen = sizeof me;
    CHECK_EQ(getsockname(c, (struct sockaddr *)&me, &melen), 0);
    char buf[16];
    struct sockaddr_in from;

    send_one(c, "abc");
    errno = 0;
    CHECK_EQ(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, NULL), -1);
    CHECK_EQ(errno, EFAULT);
    check_consumed(s);

    send_one(c, "def");
    socklen_t len = (socklen_t)-1;
    errno = 0;
    CHECK_EQ(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), -1);
    CHECK_EQ(errno, EINVAL);
    check_consumed(s);

    send_one(c, "ghi");
    memset(&from, 0xAA, sizeof from);
    len = 2;
    CHECK_EQ(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 3);
    CHECK_EQ(len, sizeof from);
    CHECK_EQ(from.sin_family, AF_INET);
    CHECK_EQ(((unsigned char *)&from)[2], 0xAA); /* only 2 bytes copied */

    send_one(c, "jkl");
    len = sizeof from;
    CHECK_EQ(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 3);
    CHECK(memcmp(buf, "jkl", 3) == 0);
    CHECK_EQ(len, sizeof from);
    CHECK_EQ(from.sin_port, me.sin_port);
    CHECK_EQ(from.sin_addr.s_addr, me.sin_addr.s_addr);

    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(s), 0);
    return 0;
}

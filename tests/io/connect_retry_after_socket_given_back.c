/* SPDX-License-Identifier: MIT */
/* Description: a blocking connect to a Unix listener whose backlog is
 * full retries every few milliseconds; when its socket is given back
 * meanwhile (sent with SCM_RIGHTS: blocking now, as another process may
 * share it), the next try is the kernel's blocking connect on the
 * offload pool, which parks only the caller, and it succeeds once the
 * listener makes room. Before, the connect decided once per call that
 * the socket was the runtime's, and that try waited in the kernel on the
 * worker: for ever on one worker, where only main could make room. */
#include <sys/un.h>

#include "io/io_util.h"

static struct sockaddr_un addr;
static socklen_t addr_len;
static int client = -1;
static atomic_int connecting;

static void *connector(void *arg)
{
    (void)arg;
    atomic_store(&connecting, 1);
    CHECK_EQ(connect(client, (struct sockaddr *)&addr, addr_len), 0);
    return NULL;
}

int main(void)
{
    /* An abstract name, unique to this process. */
    addr.sun_family = AF_UNIX;
    int n = snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "cap-connect-%d", getpid());
    addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(listener, 0);
    CHECK_EQ(bind(listener, (struct sockaddr *)&addr, addr_len), 0);
    CHECK_EQ(listen(listener, 0), 0);
    /* The one pending connection a backlog of 0 takes. */
    int filler = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(filler, 0);
    CHECK_EQ(connect(filler, (struct sockaddr *)&addr, addr_len), 0);

    client = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(client, 0);
    CHECK_EQ(kernel_nonblock(client), 1); /* the runtime's */
    cap_thread_t t = spawn(connector, NULL);
    while (atomic_load(&connecting) == 0)
        cap_sleep_ns(100000);
    cap_sleep_ns(5000000); /* it found the backlog full and waits to retry */

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    send_fd(sv[0], client);
    CHECK_EQ(kernel_nonblock(client), 0); /* given back */
    int copy = recv_fd(sv[1]);
    /* Its next tries come meanwhile; on one worker main runs again only
     * if they did not hold the worker. */
    cap_sleep_ns(20000000);

    int a = accept(listener, NULL, NULL); /* room for the connector */
    CHECK_GE(a, 0);
    join(t);
    int b = accept(listener, NULL, NULL);
    CHECK_GE(b, 0);
    CHECK_EQ(write(client, "c", 1), 1);
    char got = 0;
    CHECK_EQ(read(b, &got, 1), 1);
    CHECK_EQ(got, 'c');
    int fds[] = { a, b, copy, sv[0], sv[1], client, filler, listener };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
    return 0;
}

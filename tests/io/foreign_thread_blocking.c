/* SPDX-License-Identifier: MIT */
/* Description: a kernel thread the runtime does not run (a plain pthread)
 * gets plain libc behaviour from the intercepted names, including
 * blocking reads and accepts on sockets the runtime created and made
 * non-blocking underneath: it waits instead of seeing EAGAIN. */
#include <pthread.h>
#include <string.h>

#include "io/io_util.h"

static int sv[2], l, port;

static void *kernel_thread(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0); /* not a user thread */
    char buf[8] = { 0 };
    CHECK_EQ(read(sv[0], buf, sizeof buf), 5); /* blocks in the kernel */
    CHECK(memcmp(buf, "hello", 5) == 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    CHECK_EQ(write(c, "ok", 2), 2);
    close(c);
    return NULL;
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    l = tcp_listener(SOCK_STREAM, 8, &port);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, kernel_thread, NULL), 0);
    cap_sleep_ns(20000000);
    CHECK_EQ(write(sv[1], "hello", 5), 5);
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    char b[2];
    CHECK_EQ(read(s, b, 2), 2);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a call that races close() on another worker sees the
 * descriptor as the application made it until the number is really
 * closed. The runtime creates its sockets non-blocking; while a close
 * was under way the record had already forgotten that, so fcntl(F_GETFL)
 * reported O_NONBLOCK on a blocking socket and a blocking accept()
 * returned EAGAIN (seen in io/accept_storm on two workers). Each round a
 * watcher reads F_GETFL in a loop and an acceptor blocks in accept()
 * while main closes the listener: the watcher must see a blocking socket
 * every time until EBADF, and the acceptor must get EBADF. */
#include <stdatomic.h>

#include "io/io_util.h"

enum { ROUNDS = 20000 };

static _Atomic int listener = -1;
static atomic_int watching;

static void *watcher(void *arg)
{
    (void)arg;
    int l = atomic_load(&listener);
    for (long n = 0;; n++) {
        int fl = fcntl(l, F_GETFL);
        if (fl < 0) {
            CHECK_EQ(errno, EBADF);
            break;
        }
        CHECK_EQ(fl & O_NONBLOCK, 0);
        if (n == 0)
            atomic_store(&watching, 1);
        cap_yield(); /* one worker: let main get to its close */
    }
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    int c = accept(atomic_load(&listener), NULL, NULL);
    CHECK_EQ(c, -1);
    CHECK_EQ(errno, EBADF);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < ROUNDS; round++) {
        int port;
        atomic_store(&listener, tcp_listener(SOCK_STREAM, 16, &port));
        atomic_store(&watching, 0);
        cap_thread_t w = spawn(watcher, NULL);
        cap_thread_t a = spawn(acceptor, NULL);
        while (!atomic_load(&watching))
            cap_yield();
        CHECK_EQ(close(atomic_load(&listener)), 0);
        join(w);
        join(a);
    }
    return 0;
}

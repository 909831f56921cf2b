/* SPDX-License-Identifier: MIT */
/* Description: dup2(a, b) on one worker while dup2(b, a) runs on the
 * other. Each begins the close of its target before its system call; a
 * dup that waited for a close under way on its source would wait for the
 * other dup, which waits for it (a hang). Both must keep going, and each
 * number must still name a socket the application sees as blocking. */
#include <stdatomic.h>

#include "io/io_util.h"

enum { ROUNDS = 20000 };

static int fds[2];

static void *dupper(void *arg)
{
    intptr_t i = (intptr_t)arg;
    for (int k = 0; k < ROUNDS; k++) {
        CHECK_EQ(dup2(fds[i], fds[1 - i]), fds[1 - i]);
        if (k % 64 == 0)
            cap_yield(); /* one worker: let the other in */
    }
    return NULL;
}

int main(void)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fds[0] = sv[0];
    fds[1] = sv[1];
    cap_thread_t a = spawn(dupper, (void *)0), b = spawn(dupper, (void *)1);
    join(a);
    join(b);
    for (int i = 0; i < 2; i++) {
        int fl = fcntl(fds[i], F_GETFL);
        CHECK_GE(fl, 0);
        CHECK_EQ(fl & O_NONBLOCK, 0);
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a program that ends with _exit() or _Exit() (no atexit
 * handlers, no stream flush) has closed its sockets by the time it is
 * reaped, as on NPTL, also the ones its threads were waiting on: the
 * ports of its listening sockets can be bound again at once (no
 * SO_REUSEPORT), and the peer of its Unix stream socket reads
 * end-of-file. Waits armed by the exiting thread's worker and by the
 * other one's (io/held_sockets.h); _exit and _Exit in turn. Under
 * CAP_NETIO=uring the waits' polls held the files after the exit, until
 * the kernel ended the dead ring's requests in a worker of its own, some
 * milliseconds later: the bind failed with EADDRINUSE. */
#include "io/held_sockets.h"

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        held_child_setup((pid_t)atoi(argv[2]));
        if (strcmp(argv[3], "_Exit") == 0)
            _Exit(0); /* while a thread still waits */
        _exit(0);
    }

    int ul = held_parent_listen();
    for (int round = 0; round < 6; round++) {
        int out, peer, near_port, far_port;
        pid_t pid = held_start_child(argv[0], round % 2 ? "_Exit" : "_exit", ul, &out, &peer,
                                     &near_port, &far_port);
        held_reap_clean(pid);
        held_check_released(near_port, far_port, peer); /* at once */
        CHECK_EQ(close(out), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}

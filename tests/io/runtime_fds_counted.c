/* SPDX-License-Identifier: MIT */
/* Description: the runtime's descriptors count against RLIMIT_NOFILE, so
 * README (Limits) says how many it takes at start-up: 5 with the epoll or
 * poll backend (an epoll instance, which the poll and uring backends keep
 * too, the kick eventfd, the signal eventfd, /proc/self/status,
 * /proc/self/pagemap) and 6 with uring (its ring besides).
 * Counted in the range where they live (from min(soft limit, 1024) - 64
 * up), in a process that has done no file I/O yet (a disk ring comes with
 * its first use). A new descriptor of the runtime fails this until the
 * README says it; coreutils' sort, run under `ulimit -n 6`, found that
 * the count matters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/io_util.h"

int main(void)
{
    int base, top;
    if (!own_fd_range(&base, &top))
        return 77; /* they stay where the kernel put them: not countable apart */

    int count = 0;
    for (int fd = base; fd < top; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            count++;

    const char *net = getenv("CAP_NETIO");
    int expected = net != NULL && strcmp(net, "uring") == 0 ? 6 : 5;
    if (count != expected)
        fprintf(stderr, "runtime descriptors: %d, README says %d\n", count, expected);
    CHECK_EQ(count, expected);
    return 0;
}

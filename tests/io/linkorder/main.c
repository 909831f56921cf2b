/* SPDX-License-Identifier: MIT */
/* Description: a program linked with a library that is linked with
 * Capriccio, and not with Capriccio itself: Capriccio then comes after
 * libc in the global search order, its wrappers of read, accept, ... are
 * never called, and a blocking call would block a worker. The runtime
 * refuses to start (exit status 2, a message saying how to link):
 * io/library_after_libc_refused checks both. Preloaded, the library
 * comes first and the program must not be refused
 * (io/library_after_libc_preloaded); built with libcapriccio.a and
 * dep.c, the library is part of the program and must not be refused
 * either (io/library_linked_static_runs), though dlsym finds libc's read
 * there. Either way the program reads back, through dep.c, what it wrote
 * to a pipe. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ssize_t linkorder_dep_read(int fd, void *buf, size_t len);

int main(void)
{
    int p[2];
    char got[8] = { 0 };
    if (pipe(p) != 0 || write(p[1], "linked", 6) != 6)
        return 1;
    if (linkorder_dep_read(p[0], got, sizeof got) != 6 || memcmp(got, "linked", 6) != 0)
        return 1;
    puts("program ran");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a number that a close frees may be taken at once by an
 * open the runtime does not see (a raw system call, as Knot's openat2, or
 * glibc's internals), on another worker, before the closing thread has
 * finished updating its record. Calls on the new descriptor must treat it
 * as what it is: one thread creates and closes sockets, another opens a
 * regular file with the raw system call and reads it through read();
 * every read returns the file's bytes (a record still describing the
 * closed socket made it a recv: ENOTSOCK, seen as Knot's 500s). */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 20000 };

static const char content[] = "the file's own bytes\n";
static char path[64];
static atomic_int done;

static void *socket_churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        CHECK_GE(s, 0);
        CHECK_EQ(close(s), 0);
        cap_yield(); /* one worker: let the reader on */
    }
    return NULL;
}

int main(void)
{
    /* The file is unlinked at once and reopened through its /proc link,
     * so a failing run leaves nothing behind in /tmp. */
    char name[64];
    snprintf(name, sizeof name, "/tmp/cap-unseen-reuse-%d", (int)getpid());
    int w = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK_GE(w, 0);
    CHECK_EQ(unlink(name), 0);
    CHECK_EQ(write(w, content, sizeof content - 1), (ssize_t)(sizeof content - 1));
    snprintf(path, sizeof path, "/proc/self/fd/%d", w);

    cap_thread_t churn[2] = { spawn(socket_churn, NULL), spawn(socket_churn, NULL) };
    for (int round = 0; round < ROUNDS; round++) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        CHECK_GE(fd, 0);
        char buf[64];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0)
            fprintf(stderr, "round %d: read: %s\n", round, strerror(errno));
        CHECK_EQ(n, (ssize_t)(sizeof content - 1));
        CHECK(memcmp(buf, content, sizeof content - 1) == 0);
        CHECK_EQ(close(fd), 0);
        if (round % 64 == 0)
            cap_yield();
    }
    atomic_store(&done, 1);
    join(churn[0]);
    join(churn[1]);
    CHECK_EQ(close(w), 0);
    return 0;
}

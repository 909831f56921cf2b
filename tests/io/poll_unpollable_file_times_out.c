/* SPDX-License-Identifier: MIT */
/* Description: poll() and select() asked for an event a file can never
 * report (POLLPRI of a regular file or of /dev/null: files without a poll
 * wait queue, which the kernel always reports readable and writable) wait
 * out their timeout and return 0, on every backend, and the worker is free
 * afterwards. Under CAP_NETIO=uring such a file's poll request ended at
 * once, each time it was re-armed, and the worker spun in its harvest for
 * as long as the file stayed open (one worker: the program hung); under
 * CAP_NETIO=poll the caller woke and parked again for its whole timeout.
 * The uring and poll backends now refuse such a file as epoll does. One
 * thread per worker and one more poll at once, each its own file. */
#include <sys/select.h>

#include "io/io_util.h"

enum { THREADS = 3, ROUNDS = 4 };

static void *poll_nothing(void *arg)
{
    (void)arg;
    char path[] = "/tmp/cap-unpollable-XXXXXX";
    int file = mkstemp(path);
    CHECK_GE(file, 0);
    CHECK_EQ(unlink(path), 0);
    int null = open("/dev/null", O_RDWR);
    CHECK_GE(null, 0);
    for (int round = 0; round < ROUNDS; round++) {
        struct pollfd p = { .fd = round % 2 ? null : file, .events = POLLPRI };
        CHECK_EQ(poll(&p, 1, 20), 0);
        CHECK_EQ(p.revents, 0);

        fd_set except;
        FD_ZERO(&except);
        FD_SET(file, &except);
        struct timeval tv = { 0, 20000 };
        CHECK_EQ(select(file + 1, NULL, NULL, &except, &tv), 0);
        CHECK(!FD_ISSET(file, &except));

        /* What it can report, it reports at once. */
        struct pollfd q[2] = { { .fd = file, .events = POLLIN | POLLPRI },
                               { .fd = null, .events = POLLOUT } };
        CHECK_EQ(poll(q, 2, -1), 2);
        CHECK_EQ(q[0].revents, POLLIN);
        CHECK_EQ(q[1].revents, POLLOUT);
    }
    CHECK_EQ(close(null), 0);
    CHECK_EQ(close(file), 0);
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(poll_nothing, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    /* Every worker still runs threads and wakes readers. */
    for (int i = 0; i < 8; i++)
        parked_pipe_read_is_woken((char)('a' + i));
    return 0;
}

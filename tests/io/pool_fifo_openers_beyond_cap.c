/* SPDX-License-Identifier: MIT */
/* Description: more calls that wait without bound for another thread
 * than the offload pool's bound for work (64) all get a pool thread, as
 * each would have its own kernel thread under NPTL: 200 threads open a
 * FIFO each for reading (each open waits on the pool for its writer), all
 * of them before any writer starts, then 200 threads open the writing
 * ends; every open completes. Before, the pool stopped at 64 threads:
 * 64 readers held them all while the other readers and every writer
 * queued behind them, for good (the alarm fails the program). */
#include <fcntl.h>
#include <sys/stat.h>

#include "io/io_util.h"

enum { PAIRS = 200 };

static char fifos[PAIRS][32];
static atomic_int readers_in; /* readers about to open or opening */

static void *open_reader(void *arg)
{
    const char *path = arg;
    atomic_fetch_add(&readers_in, 1);
    int fd = open(path, O_RDONLY); /* waits for the writer */
    CHECK_GE(fd, 0);
    char c = 0;
    CHECK_EQ(read(fd, &c, 1), 1);
    CHECK_EQ(c, 'w');
    CHECK_EQ(close(fd), 0);
    return NULL;
}

static void *open_writer(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_WRONLY); /* its reader is waiting */
    CHECK_GE(fd, 0);
    CHECK_EQ(write(fd, "w", 1), 1);
    CHECK_EQ(close(fd), 0);
    return NULL;
}

int main(void)
{
    alarm(40); /* the old pool's hang: killed, so failed */
    if (raise_nofile(4 * PAIRS + 64) < 4 * PAIRS + 64)
        SKIP("too few descriptors");
    for (int i = 0; i < PAIRS; i++)
        temp_fifo(fifos[i]);
    static cap_thread_t readers[PAIRS], writers[PAIRS];
    for (int i = 0; i < PAIRS; i++)
        readers[i] = spawn(open_reader, fifos[i]);
    /* Every reader has started its open before the first writer: its
     * pool thread is held until its writer opens. */
    while (atomic_load(&readers_in) < PAIRS)
        cap_yield();
    for (int i = 0; i < PAIRS; i++)
        writers[i] = spawn(open_writer, fifos[i]);
    for (int i = 0; i < PAIRS; i++) {
        join(readers[i]);
        join(writers[i]);
    }
    for (int i = 0; i < PAIRS; i++)
        CHECK_EQ(unlink(fifos[i]), 0);
    return 0;
}

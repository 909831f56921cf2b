/* SPDX-License-Identifier: MIT */
/* Description: every job queued on the offload pool gets a kernel thread
 * of its own, even when it comes in a burst that outruns the idle
 * threads' waking: opens of FIFOs (each waits on the pool for its other
 * end) come in rounds of growing size, all the readers' opens first, then
 * the writers'. Each round has more opens than the pool has threads.
 * Before, a job counted as idle a thread already signalled for an
 * earlier job of the burst, so no thread was started for it: readers'
 * opens held every pool thread while the writers' opens that would end
 * them waited in the queue behind, for good. (Not run on uring with
 * CAP_MIGRATE=1: a reader's close on another kernel thread than the one
 * that armed its poll may release the FIFO late, README "Limits", and a
 * writer of the next round then meets that old reader instead of its
 * own, which waits for good: tests.cmake.) */
#include <fcntl.h>
#include <sys/stat.h>

#include "io/io_util.h"

enum { ROUNDS = 24 }; /* up to 48 opens at once: the pool's bound is 64 */

static char fifos[ROUNDS][32];

static void *open_reader(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_RDONLY); /* waits for the writer */
    CHECK_GE(fd, 0);
    char c = 0;
    CHECK_EQ(read(fd, &c, 1), 1);
    CHECK_EQ(c, path[0]);
    CHECK_EQ(close(fd), 0);
    return NULL;
}

static void *open_writer(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_WRONLY); /* waits for the reader */
    CHECK_GE(fd, 0);
    CHECK_EQ(write(fd, path, 1), 1);
    CHECK_EQ(close(fd), 0);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < ROUNDS; i++)
        temp_fifo(fifos[i]);
    cap_thread_t readers[ROUNDS], writers[ROUNDS];
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < round; i++)
            readers[i] = spawn(open_reader, fifos[i]);
        for (int i = 0; i < round; i++)
            writers[i] = spawn(open_writer, fifos[i]);
        for (int i = 0; i < round; i++) {
            join(readers[i]);
            join(writers[i]);
        }
    }
    for (int i = 0; i < ROUNDS; i++)
        CHECK_EQ(unlink(fifos[i]), 0);
    return 0;
}

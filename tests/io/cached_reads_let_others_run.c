/* SPDX-License-Identifier: MIT */
/* Description: a thread whose pread()s all hit the page cache (served by
 * the RWF_NOWAIT fast path, never parking) still lets the other threads of
 * its worker run: on CAP_WORKERS=1 a sleeping thread wakes and stops the
 * reader. Without a scheduling point on the fast path the sleeper's timer
 * never fires; the reader gives up after READS_MAX reads and the test
 * fails instead of hanging. */
#include <stdatomic.h>
#include <stdlib.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 16, READS_MAX = 2000000 };

static int fd;
static atomic_int stop;

static void *reader(void *arg)
{
    (void)arg;
    char b[BLOCK];
    long n = 0;
    while (!atomic_load(&stop)) {
        CHECK_EQ(pread(fd, b, BLOCK, (off_t)(n % BLOCKS) * BLOCK), BLOCK);
        CHECK(++n < READS_MAX); /* the sleeper never got to run */
    }
    return NULL;
}

int main(void)
{
    fd = cached_file(BLOCKS, BLOCK);
    cap_thread_t r = spawn(reader, NULL);
    CHECK_EQ(usleep(10000), 0);
    atomic_store(&stop, 1);
    join(r);
    close(fd);
    return 0;
}

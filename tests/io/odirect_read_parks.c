/* SPDX-License-Identifier: MIT */
/* Description: an O_DIRECT pread() parks its thread for the device I/O
 * instead of blocking the worker: on CAP_WORKERS=1 a yielding thread runs
 * between every two reads of the reader. (RWF_NOWAIT does not make an
 * O_DIRECT read asynchronous: the kernel submits it and waits, so a read
 * that tried it first would complete without parking.) With more workers
 * the two threads may run on different ones, where a tick says nothing:
 * there only the reads are checked. Skipped where the file system refuses
 * O_DIRECT, and under CAP_DISKIO=blocking, which blocks the worker by
 * design. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 64, READS = 64 };

static int fd;
static struct ticker tk;

static void *reader(void *arg)
{
    (void)arg;
    bool same_worker = cap_worker_count() == 1;
    void *buf;
    CHECK_EQ(posix_memalign(&buf, BLOCK, BLOCK), 0);
    for (int i = 0; i < READS; i++) {
        long before = atomic_load(&tk.ticks);
        CHECK_EQ(pread(fd, buf, BLOCK, (off_t)(i * 37 % BLOCKS) * BLOCK), BLOCK);
        if (same_worker)
            CHECK_GT(atomic_load(&tk.ticks), before); /* the ticker ran during the read */
    }
    free(buf);
    atomic_store(&tk.stop, 1);
    return NULL;
}

static void fill_sevens(unsigned char *b, int k)
{
    (void)k;
    memset(b, 7, BLOCK);
}

int main(void)
{
    fd = odirect_file(BLOCKS, BLOCK, fill_sevens);
    cap_thread_t t = spawn(ticker_run, &tk);
    cap_thread_t r = spawn(reader, NULL);
    join(r);
    join(t);
    close(fd);
    return 0;
}

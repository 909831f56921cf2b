/* SPDX-License-Identifier: MIT */
/* Description: 64 threads read O_DIRECT blocks at once, each its own
 * blocks, and every read returns its block's bytes. With CAP_DISKIO=uring
 * the threads of one scheduling round fill many more SQEs than a batch
 * (disk_uring.c submits every BATCH of them mid-round, the rest at the end
 * of the round): none may be left unsubmitted or completed to the wrong
 * thread. Skipped where the file system refuses O_DIRECT, and under
 * CAP_DISKIO=blocking, which blocks the worker by design. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { BLOCK = 4096, THREADS = 64, READS = 8, BLOCKS = THREADS * READS };

static int fd;

static void fill(unsigned char *b, int k)
{
    for (int i = 0; i < BLOCK; i++)
        b[i] = (unsigned char)(k * 31 + i / 512);
}

static void *reader(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned char *buf = aligned_alloc(BLOCK, BLOCK), want[BLOCK];
    CHECK(buf != NULL);
    for (int i = 0; i < READS; i++) {
        int k = (id + i * THREADS + i * 7) % BLOCKS; /* spread over the file */
        CHECK_EQ(pread(fd, buf, BLOCK, (off_t)k * BLOCK), BLOCK);
        fill(want, k);
        CHECK(memcmp(buf, want, BLOCK) == 0);
    }
    free(buf);
    return NULL;
}

int main(void)
{
    fd = odirect_file(BLOCKS, BLOCK, fill);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(reader, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    close(fd);
    return 0;
}

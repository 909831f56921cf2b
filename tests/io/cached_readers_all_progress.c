/* SPDX-License-Identifier: MIT */
/* Description: threads whose pread()s all hit the page cache (never
 * parking) take turns: each of READERS readers gets its first read done
 * while none of the others has done READS_MAX. The fast path yields once
 * a thread has run for a slice (src/io/disk.c); a reader that kept its
 * worker would reach READS_MAX before the readers queued behind it start,
 * and the test fails instead of hanging. No timing: a slice holds far
 * fewer than READS_MAX reads. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 16, READERS = 16, READS_MAX = 2000000 };

static int fd;
static atomic_int started; /* readers with at least one read done */

static void *reader(void *arg)
{
    (void)arg;
    char b[BLOCK];
    long n = 0;
    bool counted = false;
    while (atomic_load(&started) < READERS) {
        CHECK_EQ(pread(fd, b, BLOCK, (off_t)(n % BLOCKS) * BLOCK), BLOCK);
        if (!counted) {
            counted = true;
            atomic_fetch_add(&started, 1);
        }
        CHECK(++n < READS_MAX); /* some reader never got its turn */
    }
    return NULL;
}

int main(void)
{
    fd = cached_file(BLOCKS, BLOCK);
    cap_thread_t t[READERS];
    for (int i = 0; i < READERS; i++)
        t[i] = spawn(reader, NULL);
    for (int i = 0; i < READERS; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&started), READERS);
    close(fd);
    return 0;
}

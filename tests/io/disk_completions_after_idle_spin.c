/* SPDX-License-Identifier: MIT */
/* Description: every O_DIRECT read completes, whenever its completion
 * lands relative to its worker's idle spin. With CAP_DISKIO=uring a
 * worker spinning with its own reads in flight switches its ring's
 * eventfd off and watches the CQ itself; a completion can land during
 * the spin, just as it ends, or after the worker went to sleep (in its
 * ring, or, holding the descriptor instance under CAP_NETIO=poll, in
 * poll(), where only the eventfd can wake it). One reader alone first
 * (its worker spins and sleeps on every read; the adaptive spin budget
 * shrinks after long sleeps, so both endings occur), then several
 * readers beside a thread that alternates computing and short sleeps
 * (workers go between busy and idle). A completion left in a CQ
 * unannounced shows as a hang (the test's timeout). The readers check
 * their data. Skipped where the file system refuses O_DIRECT, and under
 * CAP_DISKIO=blocking. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum {
    BLOCK = 4096,
    BLOCKS = 128,
    LONE_READS = 400,
    READERS = 3,
    SHARED_READS = 300, /* per reader */
};

static int fd;
static atomic_int readers_left;

static void *reader(void *arg)
{
    long reads = (long)(intptr_t)arg;
    uint64_t seed = (uint64_t)reads * 0x9e3779b97f4a7c15ull + (uint64_t)atomic_load(&readers_left);
    unsigned char *b = aligned_alloc(BLOCK, BLOCK);
    CHECK(b != NULL);
    for (long i = 0; i < reads; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t k = (uint32_t)(seed >> 33) % BLOCKS;
        CHECK_EQ(pread(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
        CHECK_EQ(b[0], (unsigned char)k);
        CHECK_EQ(b[BLOCK - 1], (unsigned char)(k * 7));
    }
    free(b);
    atomic_fetch_sub(&readers_left, 1);
    return NULL;
}

/* Computes for a varying while, then sleeps briefly, until the readers
 * are done: its worker goes between running threads and idling. */
static void *busy_then_idle(void *arg)
{
    (void)arg;
    uint32_t x = 1;
    while (atomic_load(&readers_left) > 0) {
        x = x * 1664525u + 1013904223u;
        for (uint32_t i = 0; i < (x >> 16) % 20000; i++)
            __asm__ volatile("" : "+r"(x));
        CHECK_EQ(usleep(20 + (x >> 8) % 80), 0);
    }
    return NULL;
}

static void fill_marked(unsigned char *b, int k)
{
    memset(b, 0, BLOCK);
    b[0] = (unsigned char)k;
    b[BLOCK - 1] = (unsigned char)(k * 7);
}

int main(void)
{
    fd = odirect_file(BLOCKS, BLOCK, fill_marked);

    atomic_store(&readers_left, 1);
    join(spawn(reader, (void *)(intptr_t)LONE_READS));

    atomic_store(&readers_left, READERS);
    cap_thread_t busy = spawn(busy_then_idle, NULL);
    cap_thread_t r[READERS];
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(reader, (void *)(intptr_t)SHARED_READS);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    join(busy);
    close(fd);
    return 0;
}

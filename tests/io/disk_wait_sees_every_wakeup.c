/* SPDX-License-Identifier: MIT */
/* Description: while O_DIRECT reads keep every worker's disk queue busy
 * (so a worker with nothing else to run sleeps in its ring under
 * CAP_DISKIO=uring, io/idle.c), every other kind of wake-up still
 * reaches the threads of that worker: timers (short sleeps), network
 * readiness (a socket written by a kernel thread the runtime does not
 * run), a semaphore posted by that kernel thread, and user threads
 * waking each other, possibly across workers (a semaphore ping-pong).
 * Each of them counts its rounds; a wake-up lost in a ring wait shows as
 * a hang (the test's timeout). The readers check their data. Skipped
 * where the file system refuses O_DIRECT, and under CAP_DISKIO=blocking,
 * whose reads block the worker (its timers then wait for the readers'
 * periodic yields: the test would only be slow). */
#include <capriccio/sync.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/io_util.h"

enum {
    BLOCK = 4096,
    BLOCKS = 256,
    READERS_PER_WORKER = 2,
    MAX_READERS = 64,
    ROUNDS = 200, /* of every waker below */
};

static int fd, sv[2];
static atomic_int stop;
static atomic_long reads;
static cap_sem_t posted, ping, pong;

static void *reader(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    unsigned char *b = aligned_alloc(BLOCK, BLOCK);
    CHECK(b != NULL);
    while (!atomic_load(&stop)) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t k = (uint32_t)(seed >> 33) % BLOCKS;
        CHECK_EQ(pread(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
        CHECK_EQ(b[0], (unsigned char)k);
        CHECK_EQ(b[BLOCK - 1], (unsigned char)(k * 7));
        atomic_fetch_add(&reads, 1);
    }
    free(b);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t t0 = cap_now_ns();
        CHECK_EQ(usleep(200), 0);
        CHECK_GE(cap_now_ns() - t0, 200000u);
    }
    return NULL;
}

static void *net_reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        char c;
        CHECK_EQ(read(sv[0], &c, 1), 1);
        CHECK_EQ(c, (char)i);
    }
    return NULL;
}

static void *sem_waiter(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++)
        CHECK_EQ(cap_sem_wait(&posted), 0);
    return NULL;
}

static void *pinger(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_sem_post(&ping), 0);
        CHECK_EQ(cap_sem_wait(&pong), 0);
    }
    return NULL;
}

static void *ponger(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_sem_wait(&ping), 0);
        CHECK_EQ(cap_sem_post(&pong), 0);
    }
    return NULL;
}

/* A kernel thread the runtime does not run: a byte on the socket and a
 * semaphore post every 300 us, so they arrive while workers wait. */
static void *kernel_thread(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0);
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec ts = { 0, 300000 };
        nanosleep(&ts, NULL);
        char c = (char)i;
        CHECK_EQ(write(sv[1], &c, 1), 1);
        CHECK_EQ(cap_sem_post(&posted), 0);
    }
    return NULL;
}

static void fill_numbered(unsigned char *b, int k)
{
    memset(b, k, BLOCK);
    b[BLOCK - 1] = (unsigned char)(k * 7);
}

int main(void)
{
    fd = odirect_file(BLOCKS, BLOCK, fill_numbered);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(cap_sem_init(&posted, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&ping, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&pong, 0, 0), 0);

    int nreaders = READERS_PER_WORKER * cap_worker_count();
    nreaders = nreaders > MAX_READERS ? MAX_READERS : nreaders;
    cap_thread_t r[MAX_READERS];
    for (int i = 0; i < nreaders; i++)
        r[i] = spawn(reader, (void *)(uintptr_t)i);
    cap_thread_t t[] = { spawn(sleeper, NULL), spawn(net_reader, NULL), spawn(sem_waiter, NULL),
                         spawn(pinger, NULL), spawn(ponger, NULL) };
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, kernel_thread, NULL), 0);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        join(t[i]);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    atomic_store(&stop, 1);
    for (int i = 0; i < nreaders; i++)
        join(r[i]);
    CHECK_GT(atomic_load(&reads), 0);
    close(fd);
    close(sv[0]);
    close(sv[1]);
    return 0;
}

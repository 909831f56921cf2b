/* SPDX-License-Identifier: MIT */
/* Description: a fork's child can allocate and start threads while other
 * kernel threads of the parent allocate, free and start threads without
 * pause. A child inherits only the forking thread: a lock of the
 * allocator, or of the list of threads, held by another thread at the
 * fork stays held in the child for good. glibc's malloc and
 * pthread_create take care of theirs; GCC 12's AddressSanitizer does
 * not, and a fork handler of the runtime's holds the sanitizer's locks
 * across the real fork (util/asan_fork.c; before, the fork only waited
 * up to 5 ms for the other threads to sit in a system call, which
 * threads that compute and allocate never do, and such children hung at
 * their first allocation).
 * Here two plain kernel threads allocate and free blocks of up to 8 KiB,
 * keeping many alive, and a third starts and joins kernel threads, while
 * main forks ROUNDS times; each child allocates blocks of every size up
 * to 256 KiB, starts a kernel thread and waits until it runs, starts and
 * joins a user thread, and must exit 0 (an alarm kills a hung one).
 * Fork handlers of glibc's list (pthread_atfork without the header)
 * allocate a large block in each of their three steps: they run outside
 * the sanitizer's locks (a large block takes the lock of the sanitizer's
 * mapped blocks, which a handler run inside them waits on for good). The
 * sanitizer's quarantine of freed blocks has a lock that no function
 * takes from outside, held while a thread moves its freed blocks to the
 * shared list (a thread's move comes once it holds 1 MiB of them, and as
 * it ends): that window stays (README, Limits), so the child frees
 * nothing and ends no kernel thread, and the allocators keep to small
 * blocks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capriccio.h"
#include "check.h"
#include "fork_util.h"

enum {
    ROUNDS = 40,
    LIVE_BLOCKS = 512,       /* blocks each allocator keeps alive */
    LARGEST = 256 * 1024,    /* the child's: past the sanitizer's size
                                classes, so mapped */
    CHILD_SIZES_STEP = 1021, /* the child's sizes: 1, 1022, ... */
};

static atomic_int stop;
static atomic_long churned, started;

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A size drawn mostly small, sometimes up to 8 KiB. */
static size_t random_size(uint64_t *s)
{
    uint64_t r = next_random(s);
    return 1 + (r >> 8) % (r % 16 == 0 ? 8192 : 512);
}

static void *allocator(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    void *live[LIVE_BLOCKS] = { NULL };
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        unsigned i = (unsigned)(next_random(&seed) % LIVE_BLOCKS);
        free(live[i]);
        size_t n = random_size(&seed);
        live[i] = malloc(n);
        CHECK(live[i] != NULL);
        memset(live[i], 0x5a, n < 64 ? n : 64);
        atomic_fetch_add_explicit(&churned, 1, memory_order_relaxed);
    }
    for (unsigned i = 0; i < LIVE_BLOCKS; i++)
        free(live[i]);
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

static void *starter(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, nothing, NULL), 0);
        CHECK_EQ(pthread_join(t, NULL), 0);
        atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
    }
    return NULL;
}

/* Fork handlers of glibc's list; each allocates a mapped block. */
static atomic_int prepared, parented, childed;
static char *child_block;

static char *allocate_mapped(void)
{
    char *p = malloc(LARGEST);
    CHECK(p != NULL);
    p[LARGEST - 1] = 1;
    return p;
}

static void prepare_handler(void)
{
    free(allocate_mapped());
    atomic_fetch_add(&prepared, 1);
}

static void parent_handler(void)
{
    free(allocate_mapped());
    atomic_fetch_add(&parented, 1);
}

static void child_handler(void)
{
    child_block = allocate_mapped(); /* kept: see child() */
    atomic_fetch_add(&childed, 1);
}

static atomic_int kernel_thread_ran;

static void *note_run(void *arg)
{
    atomic_store(&kernel_thread_ran, 1);
    return arg;
}

/* The child frees nothing and joins no kernel thread: a free, and a
 * kernel thread's end, put blocks in the sanitizer's quarantine, whose
 * lock stays a window (above). It leaves by _exit, which checks no
 * leaks. */
static int child(void)
{
    alarm(10);
    if (atomic_load(&childed) != 1 || child_block == NULL)
        return 5;
    for (size_t n = 1; n < LARGEST; n += CHILD_SIZES_STEP) {
        char *p = malloc(n);
        if (p == NULL)
            return 2;
        p[n - 1] = 1;
    }
    pthread_t k;
    if (pthread_create(&k, NULL, note_run, NULL) != 0)
        return 3;
    while (!atomic_load(&kernel_thread_ran))
        cap_yield();
    cap_thread_t u;
    if (cap_thread_create(&u, NULL, nothing, NULL) != 0 || cap_thread_join(u, NULL) != 0)
        return 4;
    return 0;
}

int main(void)
{
    CHECK_EQ(pthread_atfork(prepare_handler, parent_handler, child_handler), 0);
    pthread_t busy[3]; /* plain kernel threads: glibc's pthread_create */
    for (uintptr_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&busy[i], NULL, allocator, (void *)(i + 1)), 0);
    CHECK_EQ(pthread_create(&busy[2], NULL, starter, NULL), 0);
    for (int r = 0; r < ROUNDS; r++) {
        /* Each fork lands while the others are at work. */
        long churn0 = atomic_load(&churned), start0 = atomic_load(&started);
        while (atomic_load(&churned) < churn0 + 1000 || atomic_load(&started) == start0)
            cap_yield();
        CHECK_EQ(child_exit_status(fork_child(child)), 0);
    }
    CHECK_EQ(atomic_load(&prepared), ROUNDS);
    CHECK_EQ(atomic_load(&parented), ROUNDS);
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(pthread_join(busy[i], NULL), 0);
    return 0;
}

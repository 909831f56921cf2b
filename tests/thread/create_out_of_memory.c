/* SPDX-License-Identifier: MIT */
/* Description: when memory runs out, cap_thread_create returns EAGAIN and
 * the process goes on. Threads created before then can still sleep with a
 * deadline when no memory at all is left (room in the timer heaps is
 * reserved at creation: growing a heap in the park would have to abort),
 * all wake no earlier than asked, are joined, and creation works again
 * once memory is back. The address space is bounded with RLIMIT_AS, so
 * the test is skipped under ASan (its shadow memory needs terabytes). */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define MAX_THREADS 100000
#define SLEEP_NS 20000000ull /* 20 ms */
#define MAX_PADS 256

static cap_thread_t threads[MAX_THREADS];
static void *pads[MAX_PADS];
static size_t pad_sizes[MAX_PADS];
static cap_mutex_t go_lock = CAP_MUTEX_INITIALIZER;
static cap_cond_t go_cond = CAP_COND_INITIALIZER;
static int go;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits (no deadline, so no timer) until memory is exhausted, then
 * sleeps with one: returns 1 if the sleep lasted at least SLEEP_NS. */
static void *sleeper(void *arg)
{
    (void)arg;
    cap_mutex_lock(&go_lock);
    while (!go)
        cap_cond_wait(&go_cond, &go_lock);
    cap_mutex_unlock(&go_lock);
    uint64_t t0 = now_ns();
    if (cap_sleep_ns(SLEEP_NS) != 0)
        return NULL;
    return (void *)(intptr_t)(now_ns() - t0 >= SLEEP_NS);
}

static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    CHECK(f != NULL);
    CHECK_EQ(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Takes what the C library's heap has left, largest pieces first; the
 * blocks are chained through their first word. */
static void **heap_blocks;

static void exhaust_malloc(void)
{
    for (size_t size = 65536; size >= sizeof(void *); size /= 2) {
        void **b;
        while ((b = malloc(size)) != NULL) {
            *b = heap_blocks;
            heap_blocks = b;
        }
    }
}

static void release_malloc(void)
{
    while (heap_blocks != NULL) {
        void **next = *heap_blocks;
        free(heap_blocks);
        heap_blocks = next;
    }
}

/* Maps what is left of the address space, largest pieces first. */
static int exhaust(void)
{
    int n = 0;
    for (size_t size = (size_t)64 << 20; size >= 4096; size /= 2) {
        while (n < MAX_PADS) {
            void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                           -1, 0);
            if (p == MAP_FAILED)
                break;
            pads[n] = p;
            pad_sizes[n++] = size;
        }
    }
    return n;
}

int main(void)
{
#ifdef UNDER_ASAN
    return 77;
#endif
    struct rlimit old;
    CHECK_EQ(getrlimit(RLIMIT_AS, &old), 0);
    struct rlimit lim = old;
    lim.rlim_cur = vm_size() + ((rlim_t)256 << 20);
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
        return 77; /* already tighter than we need: nothing to show */
    CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);

    int created = 0, rc = 0;
    while (created < MAX_THREADS) {
        rc = cap_thread_create(&threads[created], NULL, sleeper, NULL);
        if (rc != 0)
            break;
        created++;
    }
    CHECK_EQ(rc, EAGAIN);
    CHECK_GE(created, 100);

    int npads = exhaust();
    exhaust_malloc();
    /* Now every sleeper parks with a deadline while nothing can be
     * allocated. */
    cap_mutex_lock(&go_lock);
    go = 1;
    cap_cond_broadcast(&go_cond);
    cap_mutex_unlock(&go_lock);
    int slept = 0;
    for (int i = 0; i < created; i++) {
        void *ret = NULL;
        CHECK_EQ(cap_thread_join(threads[i], &ret), 0);
        slept += ret != NULL;
    }
    release_malloc();
    for (int i = 0; i < npads; i++)
        munmap(pads[i], pad_sizes[i]);
    CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0);
    CHECK_EQ(slept, created);

    cap_thread_t again;
    CHECK_EQ(cap_thread_create(&again, NULL, sleeper, NULL), 0);
    CHECK_EQ(cap_thread_join(again, NULL), 0);
    printf("%d threads created before EAGAIN, %d pieces mapped, all slept\n", created,
           npads);
    return 0;
}

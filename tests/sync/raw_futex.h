/* SPDX-License-Identifier: MIT */
/* What the tests of futex calls made through syscall(2) share
 * (raw_futex_*.c): errno after a park, the failure check, and their three
 * runs: private futexes, shared ones on private memory, shared ones on a
 * MAP_SHARED mapping. */
#ifndef TESTS_SYNC_RAW_FUTEX_H
#define TESTS_SYNC_RAW_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>

#include "check.h"

int *cap_errno_location(void); /* errno after a park: see io/io_util.h */
#undef errno
#define errno (*cap_errno_location())

/* FUTEX_PRIVATE_FLAG in the first run, 0 in the others: a shared futex,
 * libstdc++ 12's. */
static int private_flag = FUTEX_PRIVATE_FLAG;

/* r == -1 with errno e. */
static void fails_with(long r, int e)
{
    CHECK_EQ(r, -1);
    CHECK_EQ(errno, e);
}

/* Starts watchdog on a detached kernel thread (glibc's), then calls run
 * with private futexes, again with shared ones on the same (private)
 * memory, and once more after use_mapping has pointed the test at a
 * fresh MAP_SHARED mapping of size bytes (the watchdog may look at
 * either set of words: both stay mapped). */
static void raw_futex_three_runs(void *(*watchdog)(void *), void (*run)(void), size_t size,
                                 void (*use_mapping)(void *))
{
    pthread_t dog;
    CHECK_EQ(pthread_create(&dog, NULL, watchdog, NULL), 0);
    CHECK_EQ(pthread_detach(dog), 0);
    run();
    private_flag = 0;
    run();
    void *shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared != MAP_FAILED);
    use_mapping(shared);
    run();
}

#endif

/* SPDX-License-Identifier: MIT */
/* Description: cap_thread_exit from main() keeps the process alive until
 * every other thread has finished, then exits with status 0. The last
 * thread prints the marker that CTest looks for; if main's exit ended the
 * process early, the marker is missing and the test fails. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

enum { N = 50 };
static atomic_int finished;

static void *late_worker(void *arg)
{
    for (int i = 0; i < 20; i++)
        cap_sleep_ns(1000 * 1000); /* 1 ms: long after main has exited */
    if (atomic_fetch_add(&finished, 1) + 1 == N) {
        static const char msg[] = "all 50 threads finished after main exited\n";
        CHECK_EQ(write(1, msg, sizeof msg - 1), (long)(sizeof msg - 1));
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, late_worker, NULL), 0);
        CHECK_EQ(cap_thread_detach(t), 0);
    }
    cap_thread_exit(NULL);
}

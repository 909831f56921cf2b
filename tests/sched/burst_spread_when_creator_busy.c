/* SPDX-License-Identifier: MIT */
/* Description: with CAP_WORKERS=2, a burst of threads that main creates
 * without blocking in between (so main keeps worker 0 busy) still ends
 * up spread over both workers, although worker 1 is idle throughout and
 * could start every new thread itself. Started threads never move, so a
 * worker that took the whole burst would keep it for good (issue 4: all
 * of a pipe ring's readers on one worker, the other idle). Each thread
 * notes its worker and blocks reading a pipe until main has seen them
 * all; worker 0 starts the threads left to it once main sleeps. */
#include <capriccio.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 256 };

static int fds[2];
static atomic_int on_worker[2];
static atomic_int noted;

static void *note_and_block(void *arg)
{
    int w = cap_worker_id();
    CHECK(w == 0 || w == 1);
    atomic_fetch_add(&on_worker[w], 1);
    atomic_fetch_add(&noted, 1);
    char c;
    CHECK_EQ(read(fds[0], &c, 1), 1);
    return arg;
}

int main(void)
{
    CHECK_EQ(cap_worker_count(), 2);
    CHECK_EQ(pipe(fds), 0);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, note_and_block, NULL), 0);
    while (atomic_load(&noted) < THREADS)
        cap_sleep_ns(100 * 1000);
    /* Dealt evenly; the other worker takes one only while it is not ahead,
     * or one per 5 ms that main spends in the loop above without a
     * scheduling round. */
    int on0 = atomic_load(&on_worker[0]), on1 = atomic_load(&on_worker[1]);
    CHECK_GE(on0, THREADS / 4);
    CHECK_GE(on1, THREADS / 4);
    char bytes[THREADS] = { 0 };
    CHECK_EQ(write(fds[1], bytes, THREADS), THREADS);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    return 0;
}

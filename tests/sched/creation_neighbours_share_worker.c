/* SPDX-License-Identifier: MIT */
/* Description: with CAP_WORKERS=2, threads created one after the other
 * mostly start on the same worker as the thread created just before
 * them (new threads are dealt in runs, worker.c), while the burst as a
 * whole still spreads over both workers. Threads made in sequence are
 * often a pipeline's or a ring's neighbours (pipetest: thread i writes
 * the pipe thread i + 1 reads); dealt one by one, three neighbours in
 * four were on different workers, so most hand-offs crossed workers.
 * Each thread notes its worker and blocks reading a pipe until main has
 * seen them all. */
#include <capriccio.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 256 };

static int fds[2];
static atomic_int worker_of[THREADS];
static atomic_int noted;

static void *note_and_block(void *arg)
{
    int w = cap_worker_id();
    CHECK(w == 0 || w == 1);
    atomic_store(&worker_of[(long)arg], w);
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
    for (long i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, note_and_block, (void *)i), 0);
    while (atomic_load(&noted) < THREADS)
        cap_sleep_ns(100 * 1000);
    int on1 = 0, apart = 0;
    for (int i = 0; i < THREADS; i++) {
        on1 += atomic_load(&worker_of[i]);
        apart += i > 0 && atomic_load(&worker_of[i]) != atomic_load(&worker_of[i - 1]);
    }
    /* Runs of 8 put about a run boundary in two between workers (~24 of
     * 255 pairs), plus one where an idle worker stopped taking from the
     * other's queue; dealt one by one it was ~190. */
    CHECK_LE(apart, THREADS / 4);
    CHECK_GE(on1, THREADS / 4);
    CHECK_GE(THREADS - on1, THREADS / 4);
    char bytes[THREADS] = { 0 };
    CHECK_EQ(write(fds[1], bytes, THREADS), THREADS);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    return 0;
}

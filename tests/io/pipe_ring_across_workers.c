/* SPDX-License-Identifier: MIT */
/* Description: many cross-worker wake-ups through pipes, none lost. A ring
 * of N pipes with a thread reading each, created by main in one loop;
 * with two workers the ring's threads are spread over both (checked), so
 * about every other hop wakes a reader parked on the other worker, by
 * the writer's direct wake or the backend's event, whichever comes
 * first. Each of the tokens makes its exact number of hops (a lost
 * wake-up would leave a token in a pipe and the test would hang until its
 * timeout). Few tokens in a ring of many pipes keep the readers parking
 * between hops. */
#include <stdatomic.h>
#include <stdint.h>

#include "io/io_util.h"

enum { N = 64, TOKENS = 8, HOPS = 4000 };

static int ring[N][2];
static int done[2];
static atomic_int on_worker[2];

static void *stage(void *arg)
{
    intptr_t i = (intptr_t)arg;
    int w = cap_worker_id();
    CHECK(w == 0 || w == 1);
    atomic_fetch_add(&on_worker[w], 1);
    long passed = 0;
    uint32_t tok[3];
    ssize_t n;
    while ((n = read(ring[i][0], tok, sizeof tok)) != 0) {
        CHECK_EQ(n, (ssize_t)sizeof tok);
        CHECK_EQ(tok[1], tok[0] ^ 0xa5a5a5a5u);
        CHECK_EQ(cap_worker_id(), w); /* started threads stay */
        passed++;
        int to = tok[2] == 0 ? done[1] : ring[(i + 1) % N][1];
        tok[2]--;
        CHECK_EQ(write(to, tok, sizeof tok), (ssize_t)sizeof tok);
    }
    return (void *)passed;
}

int main(void)
{
    CHECK_GE(raise_nofile(2 * N + 64), 2 * N + 64);
    for (int i = 0; i < N; i++)
        CHECK_EQ(pipe(ring[i]), 0);
    CHECK_EQ(pipe(done), 0);
    cap_thread_t t[N];
    for (intptr_t i = 0; i < N; i++)
        t[i] = spawn(stage, (void *)i);
    for (uint32_t k = 0; k < TOKENS; k++) {
        uint32_t tok[3] = { k, k ^ 0xa5a5a5a5u, HOPS + k };
        CHECK_EQ(write(ring[k * (N / TOKENS)][1], tok, sizeof tok), (ssize_t)sizeof tok);
    }
    long want = 0;
    for (uint32_t k = 0; k < TOKENS; k++) {
        uint32_t tok[3];
        CHECK_EQ(read(done[0], tok, sizeof tok), (ssize_t)sizeof tok);
        CHECK_EQ(tok[1], tok[0] ^ 0xa5a5a5a5u);
        want += HOPS + tok[0] + 1;
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(close(ring[i][1]), 0);
    long total = 0;
    for (int i = 0; i < N; i++)
        total += (long)join(t[i]);
    CHECK_EQ(total, want);
    if (cap_worker_count() == 2) { /* spread as dealt (sched/worker.c) */
        int on0 = atomic_load(&on_worker[0]), on1 = atomic_load(&on_worker[1]);
        CHECK_GE(on0, N / 4);
        CHECK_GE(on1, N / 4);
    }
    return 0;
}

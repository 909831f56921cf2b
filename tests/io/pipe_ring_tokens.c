/* SPDX-License-Identifier: MIT */
/* Description: the pipetest pattern in small: N threads in a ring of
 * pipes, each blocked reading its own pipe and passing tokens on. Every
 * token makes exactly its number of hops and arrives intact (a lost
 * wake-up would leave a token in a pipe and the test would hang until its
 * timeout); at the end closing the write ends wakes every reader with
 * EOF. With two workers the ring's threads, created by main in one loop,
 * are spread over both (checked) and never move, so about every other hop
 * wakes a reader parked on the other worker, by the writer's direct wake
 * or the backend's event, whichever comes first. Few tokens in a ring of
 * many pipes keep the readers parking between hops. */
#include <stdatomic.h>
#include <stdint.h>

#include "io/io_util.h"

enum { N = 256, TOKENS = 16, HOPS = 20 * N };

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
        CHECK_EQ(tok[1], tok[0] ^ 0x5a5a5a5au);
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
        uint32_t tok[3] = { k, k ^ 0x5a5a5a5au, HOPS + k };
        CHECK_EQ(write(ring[(k * 37) % N][1], tok, sizeof tok), (ssize_t)sizeof tok);
    }
    long want = 0;
    for (uint32_t k = 0; k < TOKENS; k++) {
        uint32_t tok[3];
        CHECK_EQ(read(done[0], tok, sizeof tok), (ssize_t)sizeof tok);
        CHECK_EQ(tok[1], tok[0] ^ 0x5a5a5a5au);
        want += HOPS + tok[0] + 1;
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(close(ring[i][1]), 0);
    long total = 0;
    for (int i = 0; i < N; i++)
        total += (long)join(t[i]);
    CHECK_EQ(total, want);
    if (cap_worker_count() == 2) { /* spread as dealt (sched/worker.c) */
        CHECK_GE(atomic_load(&on_worker[0]), N / 4);
        CHECK_GE(atomic_load(&on_worker[1]), N / 4);
    }
    return 0;
}

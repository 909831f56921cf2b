/* SPDX-License-Identifier: MIT */
/* Description: the pipetest pattern in small: N threads in a ring of
 * pipes, each blocked reading its own pipe and passing tokens on. Every
 * token makes exactly its number of hops and arrives intact; at the end
 * closing the write ends wakes every reader with EOF. */
#include <stdint.h>

#include "io/io_util.h"

enum { N = 256, TOKENS = 16, HOPS = 20 * N };

static int ring[N][2];
static int done[2];

static void *stage(void *arg)
{
    intptr_t i = (intptr_t)arg;
    long passed = 0;
    uint32_t tok[3];
    ssize_t n;
    while ((n = read(ring[i][0], tok, sizeof tok)) != 0) {
        CHECK_EQ(n, (ssize_t)sizeof tok);
        CHECK_EQ(tok[1], tok[0] ^ 0x5a5a5a5au);
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
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a ring of small pipes (one page each) in which writers
 * block as often as readers: every stage reads a whole token of four
 * pages from its pipe and writes it on to the next, so each write parks
 * until the next stage's reads make room, and each read parks until the
 * previous stage's writes bring data. The pipes are private (io/pipe.h:
 * never armed in the backend), so every one of these wake-ups is the
 * direct one of a transfer on the other end, across workers with two.
 * Every token arrives intact after its number of hops (a lost wake-up
 * hangs the test until its timeout); closing the write ends at the end
 * wakes every reader with EOF. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { N = 48, TOKENS = 12, HOPS = 6 * N, PAGE = 4096, TOK = 4 * PAGE };

static int ring[N][2];
static int done[2];

static void fill(unsigned char *b, uint32_t id, uint32_t left)
{
    memcpy(b, &id, 4);
    memcpy(b + 4, &left, 4);
    for (size_t i = 8; i < TOK; i++)
        b[i] = (unsigned char)(id * 131 + i);
}

static void check(const unsigned char *b, uint32_t *id, uint32_t *left)
{
    memcpy(id, b, 4);
    memcpy(left, b + 4, 4);
    for (size_t i = 8; i < TOK; i++)
        CHECK_EQ(b[i], (unsigned char)(*id * 131 + i));
}

/* Reads exactly TOK bytes; 0 at EOF before any. */
static size_t read_token(int fd, unsigned char *b)
{
    size_t got = 0;
    while (got < TOK) {
        ssize_t r = read(fd, b + got, TOK - got);
        CHECK(r >= 0);
        if (r == 0) {
            CHECK_EQ(got, 0);
            return 0;
        }
        got += (size_t)r;
    }
    return got;
}

static void *stage(void *arg)
{
    intptr_t i = (intptr_t)arg;
    unsigned char *b = malloc(TOK);
    CHECK(b != NULL);
    long passed = 0;
    if (i % (N / TOKENS) == 0) { /* starts a token: every pipe has one writer */
        uint32_t id = (uint32_t)(i / (N / TOKENS));
        fill(b, id, HOPS + id);
        CHECK_EQ(write(ring[(i + 1) % N][1], b, TOK), (ssize_t)TOK);
    }
    while (read_token(ring[i][0], b) == TOK) {
        uint32_t id, left;
        check(b, &id, &left);
        passed++;
        if (left == 0) { /* its id only: writes to one pipe by many stay whole */
            CHECK_EQ(write(done[1], &id, sizeof id), (ssize_t)sizeof id);
            continue;
        }
        left--;
        memcpy(b + 4, &left, 4);
        /* One call: a blocking write on a pipe writes everything. */
        CHECK_EQ(write(ring[(i + 1) % N][1], b, TOK), (ssize_t)TOK);
    }
    free(b);
    return (void *)passed;
}

int main(void)
{
    CHECK_GE(raise_nofile(2 * N + 64), 2 * N + 64);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(pipe(ring[i]), 0);
        CHECK(fcntl(ring[i][1], F_SETPIPE_SZ, PAGE) >= PAGE);
    }
    CHECK_EQ(pipe(done), 0);
    cap_thread_t t[N];
    for (intptr_t i = 0; i < N; i++)
        t[i] = spawn(stage, (void *)i);
    long want = 0;
    uint32_t seen = 0;
    for (uint32_t k = 0; k < TOKENS; k++) {
        uint32_t id;
        CHECK_EQ(read(done[0], &id, sizeof id), (ssize_t)sizeof id);
        CHECK(id < TOKENS);
        CHECK(!(seen & (1u << id)));
        seen |= 1u << id;
        want += HOPS + id + 1;
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(close(ring[i][1]), 0);
    long hops = 0;
    for (int i = 0; i < N; i++)
        hops += (long)join(t[i]);
    CHECK_EQ(hops, want);
    for (int i = 0; i < N; i++)
        CHECK_EQ(close(ring[i][0]), 0);
    CHECK_EQ(close(done[0]), 0);
    CHECK_EQ(close(done[1]), 0);
    return 0;
}

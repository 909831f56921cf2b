/* SPDX-License-Identifier: MIT */
/* Description: two threads hand a turn back and forth 20,000 times with
 * one mutex, one condition variable and signal (not broadcast), with the
 * signal sent after unlocking half of the time; any lost wake-up stops
 * the ping-pong for good (the test would time out). */
#include "util.h"

enum { ROUNDS = 20000 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int turn; /* 0 or 1: whose move */
static long moves[2];

static void *player(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_mutex_lock(&m), 0);
        while (turn != me)
            CHECK_EQ(cap_cond_wait(&c, &m), 0);
        moves[me]++;
        turn = !me;
        if (i % 2) {
            CHECK_EQ(cap_cond_signal(&c), 0);
            CHECK_EQ(cap_mutex_unlock(&m), 0);
        } else {
            CHECK_EQ(cap_mutex_unlock(&m), 0);
            CHECK_EQ(cap_cond_signal(&c), 0);
        }
    }
    return NULL;
}

int main(void)
{
    cap_thread_t a = spawn(player, (void *)0);
    cap_thread_t b = spawn(player, (void *)1);
    join(a);
    join(b);
    CHECK_EQ(moves[0], ROUNDS);
    CHECK_EQ(moves[1], ROUNDS);
    return 0;
}

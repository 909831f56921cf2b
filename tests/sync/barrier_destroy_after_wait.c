/* SPDX-License-Identifier: MIT */
/* Description: the serial thread may destroy and free the barrier as soon
 * as its wait returns, while the others are still on their way out; they
 * must not touch it afterwards (ASan catches a use after free), and
 * destroy waits for them. */
#include <stdlib.h>

#include "util.h"

enum { ROUNDS = 300, THREADS = 6 };

static void *runner(void *arg)
{
    cap_barrier_t *b = arg;
    if (cap_barrier_wait(b) == CAP_BARRIER_SERIAL_THREAD) {
        CHECK_EQ(cap_barrier_destroy(b), 0);
        free(b);
    }
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        cap_barrier_t *b = malloc(sizeof *b);
        CHECK(b != NULL);
        CHECK_EQ(cap_barrier_init(b, NULL, THREADS), 0);
        cap_thread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            t[i] = spawn(runner, b);
        for (int i = 0; i < THREADS; i++)
            join(t[i]);
    }
    return 0;
}

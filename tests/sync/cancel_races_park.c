/* SPDX-License-Identifier: MIT */
/* Description: a cancel that arrives while its target is in the middle of
 * parking at a cancellation point (after checking for a request, before
 * its context is saved) is not lost. Each round starts a thread that
 * waits forever on a semaphore and cancels it after a varying delay, so
 * over the rounds the request lands all over the park path; a lost
 * request leaves the join waiting forever (the deadlock report or the
 * timeout fails the test). Races need two workers; with one it still
 * checks that every cancel lands. */
#include <stdatomic.h>

#include "util.h"

enum { ROUNDS = 20000 };

static cap_sem_t never;
static atomic_int started;

static void *victim(void *arg)
{
    (void)arg;
    atomic_store(&started, 1);
    cap_sem_wait(&never);
    CHECK(0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&never, 0, 0), 0);
    for (int r = 0; r < ROUNDS; r++) {
        atomic_store(&started, 0);
        cap_thread_t t = spawn(victim, NULL);
        if (cap_worker_count() > 1) {
            /* Wait for it to start (on another worker, or on ours once we
             * yield), then a little more: over the rounds the delay sweeps
             * the request across its park path. */
            while (!atomic_load(&started))
                cap_yield();
            for (int i = 0; i < r % 200; i++)
                __builtin_ia32_pause();
        }
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK(join(t) == CAP_CANCELED);
    }
    CHECK_EQ(cap_sem_destroy(&never), 0);
    return 0;
}

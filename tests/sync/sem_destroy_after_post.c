/* SPDX-License-Identifier: MIT */
/* Description: a semaphore may be destroyed and freed as soon as no
 * thread is blocked on it: a waiter woken by a post must not touch it
 * after its wait returned (ASan reports a use after free otherwise). The
 * waiter frees it itself right after waking, for many rounds. */
#include <stdlib.h>

#include "util.h"

enum { ROUNDS = 500 };

static void *waiter(void *arg)
{
    cap_sem_t *s = arg;
    CHECK_EQ(cap_sem_wait(s), 0);
    CHECK_EQ(cap_sem_destroy(s), 0);
    free(s);
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        cap_sem_t *s = malloc(sizeof *s);
        CHECK(s != NULL);
        CHECK_EQ(cap_sem_init(s, 0, 0), 0);
        cap_thread_t t = spawn(waiter, s);
        if (r % 2)
            cap_yield();
        CHECK_EQ(cap_sem_post(s), 0); /* our last touch */
        join(t);
    }
    return 0;
}

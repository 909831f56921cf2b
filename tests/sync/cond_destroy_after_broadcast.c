/* SPDX-License-Identifier: MIT */
/* Description: POSIX allows destroying and freeing a condition variable
 * right after a broadcast, before the woken threads have returned from
 * their wait; they must not touch it afterwards (ASan reports it if they
 * do), and destroy must not return while they still might. Repeated for
 * many rounds. */
#include <stdlib.h>

#include "util.h"

enum { ROUNDS = 200, WAITERS = 8 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t *c;
static int waiting, go;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_cond_t *mine = c;
    waiting++;
    while (!go)
        CHECK_EQ(cap_cond_wait(mine, &m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        c = malloc(sizeof *c);
        CHECK(c != NULL);
        CHECK_EQ(cap_cond_init(c, NULL), 0);
        go = 0;
        waiting = 0;
        cap_thread_t t[WAITERS];
        for (int i = 0; i < WAITERS; i++)
            t[i] = spawn(waiter, NULL);
        for (;;) {
            CHECK_EQ(cap_mutex_lock(&m), 0);
            int n = waiting;
            CHECK_EQ(cap_mutex_unlock(&m), 0);
            if (n == WAITERS)
                break;
            cap_yield();
        }
        CHECK_EQ(cap_mutex_lock(&m), 0);
        go = 1;
        CHECK_EQ(cap_cond_broadcast(c), 0);
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        CHECK_EQ(cap_cond_destroy(c), 0);
        free(c); /* any later touch by a waiter is a use after free */
        for (int i = 0; i < WAITERS; i++)
            join(t[i]);
    }
    return 0;
}

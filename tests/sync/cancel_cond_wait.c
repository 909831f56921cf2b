/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in cond_wait (and one in cond_timedwait)
 * is cancelled: its cleanup handler runs with the mutex held again, it
 * exits with CAP_CANCELED, and the mutex is free afterwards. */
#include <stdatomic.h>

#include "util.h"

static cap_mutex_t m = CAP_MUTEX_ERRORCHECK_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int waiting;
static atomic_int handler_ran, handler_held_mutex;

static void unlock_handler(void *arg)
{
    atomic_fetch_add(&handler_ran, 1);
    /* EDEADLK proves the handler runs with the mutex held by this thread. */
    if (cap_mutex_lock(arg) == EDEADLK)
        atomic_fetch_add(&handler_held_mutex, 1);
    CHECK_EQ(cap_mutex_unlock(arg), 0);
}

static void *waiter(void *arg)
{
    int timed = (int)(intptr_t)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_cleanup_push(unlock_handler, &m);
    waiting++;
    for (;;) { /* nobody ever signals */
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
            cap_cond_timedwait(&c, &m, &abs);
        } else {
            cap_cond_wait(&c, &m);
        }
    }
    cap_cleanup_pop(1);
    return NULL;
}

int main(void)
{
    for (int timed = 0; timed < 2; timed++) {
        cap_thread_t t = spawn(waiter, (void *)(intptr_t)timed);
        for (;;) { /* until it waits (it released m inside the wait) */
            CHECK_EQ(cap_mutex_lock(&m), 0);
            int w = waiting;
            CHECK_EQ(cap_mutex_unlock(&m), 0);
            if (w == timed + 1)
                break;
            cap_yield();
        }
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK(join(t) == CAP_CANCELED);
        CHECK_EQ(atomic_load(&handler_ran), timed + 1);
        CHECK_EQ(atomic_load(&handler_held_mutex), timed + 1);
        CHECK_EQ(cap_mutex_trylock(&m), 0);
        CHECK_EQ(cap_mutex_unlock(&m), 0);
    }
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

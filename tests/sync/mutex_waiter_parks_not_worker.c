/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked on a mutex parks only itself, not its
 * worker: while the holder keeps the mutex and the waiter waits for it,
 * a third thread still runs (with one worker too), and the waiter gets
 * the mutex afterwards. */
#include <stdatomic.h>

#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_sem_t held, third_done;
static atomic_int got;

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_sem_post(&held), 0);
    CHECK_EQ(cap_sem_wait(&third_done), 0); /* keep it until the third ran */
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    atomic_store(&got, 1);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

static void *third(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_post(&third_done), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&held, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&third_done, 0, 0), 0);
    cap_thread_t h = spawn(holder, NULL);
    CHECK_EQ(cap_sem_wait(&held), 0);
    cap_thread_t w = spawn(waiter, NULL);
    for (int i = 0; i < 10; i++)
        cap_yield(); /* the waiter blocks on m meanwhile */
    cap_thread_t t = spawn(third, NULL);
    join(t);
    join(h);
    join(w);
    CHECK_EQ(atomic_load(&got), 1);
    return 0;
}

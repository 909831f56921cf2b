/* SPDX-License-Identifier: MIT */
/* Description: a thread waiting for a spin lock never keeps its worker:
 * with one worker, while the holder sleeps with the lock, another thread
 * still runs, and the waiter gets the lock after the holder's unlock.
 * (A pure spin would hang the single worker; the test would time out.) */
#include <stdatomic.h>

#include "util.h"

static cap_spin_t s;
static cap_sem_t held;
static atomic_int bystander_ran, waiter_got;

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_spin_lock(&s), 0);
    CHECK_EQ(cap_sem_post(&held), 0);
    while (!atomic_load(&bystander_ran))
        cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&waiter_got), 0);
    CHECK_EQ(cap_spin_unlock(&s), 0);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_spin_lock(&s), 0);
    atomic_store(&waiter_got, 1);
    CHECK_EQ(cap_spin_unlock(&s), 0);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_spin_init(&s, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_spin_destroy(&s), 0);
    CHECK_EQ(cap_spin_init(&s, 3), EINVAL);
    CHECK_EQ(cap_spin_init(&s, CAP_PROCESS_PRIVATE), 0);
    CHECK_EQ(cap_sem_init(&held, 0, 0), 0);
    cap_thread_t h = spawn(holder, NULL);
    CHECK_EQ(cap_sem_wait(&held), 0);
    CHECK_EQ(cap_spin_trylock(&s), EBUSY);
    CHECK_EQ(cap_spin_destroy(&s), EBUSY);
    cap_thread_t w = spawn(waiter, NULL);
    cap_thread_t b = spawn(bystander, NULL);
    join(b);
    join(h);
    join(w);
    CHECK_EQ(atomic_load(&waiter_got), 1);
    CHECK_EQ(cap_spin_unlock(&s), EPERM);
    CHECK_EQ(cap_spin_destroy(&s), 0);
    return 0;
}

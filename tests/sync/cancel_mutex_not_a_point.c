/* SPDX-License-Identifier: MIT */
/* Description: mutex waits are not cancellation points: a thread cancelled
 * while blocked in cap_mutex_lock gets the mutex when it is released, and
 * is cancelled only at its next cancellation point. */
#include <stdatomic.h>

#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_sem_t asking;
static atomic_int got_it;

static void *locker(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_post(&asking), 0);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    atomic_store(&got_it, 1);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    cap_testcancel();
    atomic_store(&got_it, 2);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&asking, 0, 0), 0);
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_thread_t t = spawn(locker, NULL);
    CHECK_EQ(cap_sem_wait(&asking), 0);
    cap_sleep_ns(1000000); /* it blocks on m (or is about to) */
    CHECK_EQ(cap_thread_cancel(t), 0);
    cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&got_it), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&got_it), 1);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a semaphore counts: init value, trywait EAGAIN at 0,
 * getvalue, post/wait, a wait that blocks until a post; init refuses
 * values above CAP_SEM_VALUE_MAX (EINVAL) and process sharing (ENOTSUP);
 * destroy says EBUSY while a thread waits. */
#include <stdatomic.h>

#include "util.h"

static cap_sem_t s;
static atomic_int passed;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(&s), 0);
    atomic_store(&passed, 1);
    return NULL;
}

int main(void)
{
    int v = -1;
    CHECK_EQ(cap_sem_init(&s, 0, (unsigned)CAP_SEM_VALUE_MAX + 1), EINVAL);
    CHECK_EQ(cap_sem_init(&s, 1, 0), 0); /* process-shared: sem_shared_* tests */
    CHECK_EQ(cap_sem_destroy(&s), 0);
    CHECK_EQ(cap_sem_init(&s, 0, 3), 0);
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 3);
    CHECK_EQ(cap_sem_wait(&s), 0);
    CHECK_EQ(cap_sem_trywait(&s), 0);
    CHECK_EQ(cap_sem_wait(&s), 0);
    CHECK_EQ(cap_sem_trywait(&s), EAGAIN);
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);

    cap_thread_t t = spawn(waiter, NULL);
    while (cap_sem_destroy(&s) != EBUSY)
        cap_yield(); /* until the waiter counts itself in */
    CHECK_EQ(atomic_load(&passed), 0);
    CHECK_EQ(cap_sem_post(&s), 0);
    join(t);
    CHECK_EQ(atomic_load(&passed), 1);
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(cap_sem_destroy(&s), 0);

    cap_sem_t st = CAP_SEM_INITIALIZER(2);
    CHECK_EQ(cap_sem_trywait(&st), 0);
    CHECK_EQ(cap_sem_trywait(&st), 0);
    CHECK_EQ(cap_sem_trywait(&st), EAGAIN);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: barrier_init refuses a count of 0 (EINVAL); destroy during
 * an incomplete round is EBUSY; a count of 1 makes every caller the
 * serial thread; the attribute refuses process sharing. */
#include "util.h"

static cap_barrier_t b;

static void *waiter(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)cap_barrier_wait(&b);
}

int main(void)
{
    cap_barrierattr_t a;
    int v = -1;
    CHECK_EQ(cap_barrierattr_init(&a), 0);
    CHECK_EQ(cap_barrierattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_PRIVATE);
    CHECK_EQ(cap_barrierattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_barrierattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_SHARED);
    CHECK_EQ(cap_barrierattr_setpshared(&a, 2), EINVAL);
    CHECK_EQ(cap_barrierattr_setpshared(&a, CAP_PROCESS_PRIVATE), 0);

    CHECK_EQ(cap_barrier_init(&b, &a, 0), EINVAL);
    CHECK_EQ(cap_barrier_init(&b, &a, 1), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cap_barrier_wait(&b), CAP_BARRIER_SERIAL_THREAD);
    CHECK_EQ(cap_barrier_destroy(&b), 0);

    CHECK_EQ(cap_barrier_init(&b, &a, 2), 0);
    cap_thread_t t = spawn(waiter, NULL);
    while (cap_barrier_destroy(&b) != EBUSY)
        cap_yield(); /* until the waiter has arrived */
    int mine = cap_barrier_wait(&b);
    int theirs = (int)(intptr_t)join(t);
    CHECK_EQ(mine + theirs, CAP_BARRIER_SERIAL_THREAD); /* one -1, one 0 */
    CHECK_EQ(cap_barrier_destroy(&b), 0);
    CHECK_EQ(cap_barrierattr_destroy(&a), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: through <capriccio/pthread.h>, C11's thrd_create makes
 * user threads, as pthread_create does: each runs on a worker of the
 * library (cap_worker_id is -1 on a kernel thread it does not run) with a
 * handle of its own; 10,000 of them sleep at once in thrd_sleep and end
 * on one worker (the timeout of the test is the failure otherwise); thrd_exit's value and the start
 * function's result arrive through thrd_join; thrd_join and thrd_detach
 * of a joined handle say thrd_error. Before, the header left <threads.h>
 * to glibc: kernel threads (cap_worker_id -1). */
#include <capriccio/pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <threads.h>

#include "check.h"

enum { MANY = 10000 };

static atomic_int on_worker, sleepers_done;

static int where(void *arg)
{
    if (cap_worker_id() >= 0 && cap_thread_self() != 0 && thrd_current() == cap_thread_self())
        atomic_fetch_add(&on_worker, 1);
    if (arg != NULL)
        thrd_exit(-5); /* negative: the int survives the round trip */
    return 42;
}

static int sleeper(void *arg)
{
    (void)arg;
    struct timespec nap = { 0, 200000000 };
    CHECK_EQ(thrd_sleep(&nap, NULL), 0);
    atomic_fetch_add(&sleepers_done, 1);
    return 0;
}

int main(void)
{
    thrd_t a, b;
    CHECK_EQ(thrd_create(&a, where, NULL), thrd_success);
    CHECK_EQ(thrd_create(&b, where, (void *)1), thrd_success);
    CHECK(!thrd_equal(a, b));
    int ra = 0, rb = 0;
    CHECK_EQ(thrd_join(a, &ra), thrd_success);
    CHECK_EQ(thrd_join(b, &rb), thrd_success);
    CHECK_EQ(ra, 42);
    CHECK_EQ(rb, -5);
    CHECK_EQ(atomic_load(&on_worker), 2);
    CHECK_EQ(thrd_join(a, NULL), thrd_error); /* joined already */
    CHECK_EQ(thrd_detach(b), thrd_error);

    /* Had thrd_sleep or the threads held a kernel thread each way, one
     * worker would take MANY sleeps in a row (2,000 s): the test's
     * timeout is the failure. */
    static thrd_t t[MANY];
    for (int i = 0; i < MANY; i++)
        CHECK_EQ(thrd_create(&t[i], sleeper, NULL), thrd_success);
    for (int i = 0; i < MANY; i++)
        CHECK_EQ(thrd_join(t[i], NULL), thrd_success);
    CHECK_EQ(atomic_load(&sleepers_done), MANY);
    return 0;
}

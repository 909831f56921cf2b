/* SPDX-License-Identifier: MIT */
/* Description: a condition variable that a thread of the parent waits on
 * when another forks: in the child that waiter does not exist; a signal
 * there is not taken by it (a new thread of the child, waiting, gets the
 * wake-up), and destroy returns instead of waiting for the parent's
 * waiter to leave the wait call, which it never does there. In the parent
 * the waiter is signalled as usual. Without that the child's destroy
 * parks for good (its deadlock report, or the alarm, ends it). */
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "util.h"

enum { POLL_NS = 100 * 1000, CHILD_ALARM_S = 20 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static int ready; /* [m] the predicate */
static atomic_int waiting;

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    atomic_store(&waiting, 1);
    while (!ready)
        CHECK_EQ(cap_cond_wait(&c, &m), 0);
    ready = 0;
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

/* Sets the predicate and signals once, under the mutex. */
static void post(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    ready = 1;
    CHECK_EQ(cap_cond_signal(&c), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
}

/* The child's checks; its exit status says which failed (0: none; 2 is
 * the deadlock report's). */
static int child(void)
{
    alarm(CHILD_ALARM_S);
    atomic_store(&waiting, 0);
    cap_thread_t t = spawn(waiter, NULL);
    while (!atomic_load(&waiting))
        cap_sleep_ns(POLL_NS);
    post(); /* the child's waiter is parked or sees ready: either way */
    join(t);
    return cap_cond_destroy(&c) == 0 ? 0 : 3;
}

int main(void)
{
    cap_thread_t t = spawn(waiter, NULL);
    while (!atomic_load(&waiting))
        cap_sleep_ns(POLL_NS);
    CHECK_EQ(cap_mutex_lock(&m), 0); /* the waiter has released it: parked */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    run_in_fork_child(child);
    post();
    join(t);
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

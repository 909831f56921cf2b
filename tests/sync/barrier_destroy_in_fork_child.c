/* SPDX-License-Identifier: MIT */
/* Description: a barrier that a thread of the parent is parked on when the
 * forking thread forks: in the child the forking thread's arrival
 * completes that round (as it does in the parent), new threads of the
 * child go through rounds of their own, and destroy returns instead of
 * waiting for the parent's thread to leave the barrier, which it never
 * does there. In the parent the round completes as usual. Without that
 * the child's destroy parks for good (its deadlock report, or the alarm,
 * ends it). */
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "util.h"

enum { POLL_NS = 100 * 1000, CHILD_ALARM_S = 20 };

static cap_barrier_t b;

static void *arrive(void *arg)
{
    (void)arg;
    int rc = cap_barrier_wait(&b);
    CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none; 2 is
 * the deadlock report's). */
static int child(void)
{
    alarm(CHILD_ALARM_S);
    int rc = cap_barrier_wait(&b); /* the parent's thread has arrived */
    if (rc != 0 && rc != CAP_BARRIER_SERIAL_THREAD)
        return 3;
    cap_thread_t t1 = spawn(arrive, NULL);
    cap_thread_t t2 = spawn(arrive, NULL);
    join(t1);
    join(t2);
    return cap_barrier_destroy(&b) == 0 ? 0 : 4;
}

int main(void)
{
    CHECK_EQ(cap_barrier_init(&b, NULL, 2), 0);
    cap_thread_t t = spawn(arrive, NULL);
    while (atomic_load((_Atomic uint32_t *)&b.arrived) != 1)
        cap_sleep_ns(POLL_NS);
    run_in_fork_child(child);
    int rc = cap_barrier_wait(&b);
    CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
    join(t);
    CHECK_EQ(cap_barrier_destroy(&b), 0);
    return 0;
}

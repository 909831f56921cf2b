/* SPDX-License-Identifier: MIT */
/* Description: a mutex whose unlock, just before fork(), handed it off
 * (state flag 8) to a starving waiter of the parent that had not yet run:
 * in the child that waiter does not exist, and the child's trylock, and
 * lock from a new thread, take the mutex instead of waiting for it for
 * good. (The forking thread had unlocked it: under glibc the child would
 * find it free unless the waiter had already returned from its lock.) In
 * the parent the waiter still gets it. With one worker the waiter cannot
 * run between the unlock and the fork; with two it may have taken the
 * lock first (then the child reports it and the test is skipped). The
 * flag is raised as in mutex_unlock_in_fork_child_frees. */
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "starving_waiter.h"

enum { HANDOFF = 8 };
enum { NOT_HANDED_OFF = 10, CHILD_ALARM_S = 20 };

/* The child's checks; its exit status says which failed (0: none; 2 is
 * the deadlock report's). */
static int child(void)
{
    alarm(CHILD_ALARM_S);
    if (!(atomic_load((_Atomic uint32_t *)&m.state) & HANDOFF))
        return NOT_HANDED_OFF; /* the waiter took it before the fork */
    if (cap_mutex_trylock(&m) != 0)
        return 3; /* still reserved for the parent's waiter */
    if (cap_mutex_unlock(&m) != 0)
        return 4;
    join(spawn(lock_once, NULL));
    return cap_mutex_destroy(&m) == 0 ? 0 : 5;
}

/* The same, through a blocking lock (a second child, forked right after
 * the first). */
static int child_lock(void)
{
    alarm(CHILD_ALARM_S);
    if (!(atomic_load((_Atomic uint32_t *)&m.state) & HANDOFF))
        return NOT_HANDED_OFF;
    join(spawn(lock_once, NULL)); /* parks for good if it waits for the waiter */
    return cap_mutex_destroy(&m) == 0 ? 0 : 6;
}

int main(void)
{
    cap_thread_t w = hold_with_parked_waiter();
    if (!barge_until_starving(w))
        return 77;
    CHECK_EQ(cap_mutex_unlock(&m), 0); /* hands it off to the waiter */
    pid_t a = fork_child(child); /* both before anything parks: the */
    pid_t b = fork_child(child_lock); /* waiter may run once we wait */
    int rc = child_exit_status(a);
    int rc_lock = child_exit_status(b);
    join(w);
    CHECK_EQ(atomic_load(&waiter_in), 1);
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    if ((rc == NOT_HANDED_OFF || rc_lock == NOT_HANDED_OFF) && cap_worker_count() > 1) {
        fprintf(stderr, "the waiter took the lock before the fork: skipped\n");
        return 77;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(rc_lock, 0);
    return 0;
}

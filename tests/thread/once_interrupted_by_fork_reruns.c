/* SPDX-License-Identifier: MIT */
/* Description: a fork() while another thread of the parent is inside a
 * cap_once init: in the child that thread does not exist, so a cap_once
 * there runs init itself (as glibc's pthread_once does) instead of
 * waiting for an init that will never finish, and later calls, from a new
 * thread too, find it done. In the parent the running init finishes and
 * is not run again. Without that the child's cap_once parks for good
 * (its deadlock report, or the alarm, ends it). */
#include <capriccio.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "check.h"

enum { POLL_NS = 100 * 1000, CHILD_ALARM_S = 20 };

static cap_once_t once = CAP_ONCE_INIT;
static cap_sem_t go = CAP_SEM_INITIALIZER(0);
static atomic_int in_init, parent_calls, child_calls;

static void parent_init(void)
{
    atomic_fetch_add(&parent_calls, 1);
    atomic_store(&in_init, 1);
    CHECK_EQ(cap_sem_wait(&go), 0); /* until after the fork */
}

static void child_init(void)
{
    atomic_fetch_add(&child_calls, 1);
}

static void *run_once(void *arg)
{
    CHECK_EQ(cap_once(&once, (void (*)(void))arg), 0);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none; 2 is
 * the deadlock report's). */
static int child(void)
{
    alarm(CHILD_ALARM_S);
    if (cap_once(&once, child_init) != 0)
        return 3;
    if (atomic_load(&child_calls) != 1)
        return 4;
    cap_thread_t t;
    if (cap_thread_create(&t, NULL, run_once, (void *)child_init) != 0 ||
        cap_thread_join(t, NULL) != 0)
        return 5;
    return atomic_load(&child_calls) == 1 ? 0 : 6;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run_once, (void *)parent_init), 0);
    while (!atomic_load(&in_init))
        cap_sleep_ns(POLL_NS);
    run_in_fork_child(child);
    CHECK_EQ(cap_sem_post(&go), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(cap_once(&once, child_init), 0);
    CHECK_EQ(atomic_load(&parent_calls), 1);
    CHECK_EQ(atomic_load(&child_calls), 0);
    return 0;
}

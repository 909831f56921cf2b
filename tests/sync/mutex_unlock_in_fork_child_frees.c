/* SPDX-License-Identifier: MIT */
/* Description: a mutex held across fork() while a waiter of the parent
 * has flagged itself starving (state flag 4, the hand-off mode): an
 * unlock in the child frees it, since that waiter does not exist there,
 * and the child can lock it again, from a new thread too. (An unlock
 * that handed it off would leave it taken for good: the classic
 * pthread_atfork use, prepare locks and child unlocks, would leave the
 * child a dead lock.) In the parent the unlock still hands it to the
 * waiter. The holder relocks at once after each unlock, sleeping with the
 * lock held, until the woken waiter has been passed over long enough to
 * set the flag (as in mutex_passed_over_waiter_gets_lock). */
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

enum { HOLDER_ROUNDS = 20000, HOLD_NS = 100 * 1000, STARVING = 4 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static atomic_int waiter_in, waiter_ready;

static void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_ready, 1);
    CHECK_EQ(cap_mutex_lock(&m), 0); /* the holder has it: we park */
    atomic_store(&waiter_in, 1);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

static void *lock_once(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none). */
static int child(void)
{
    if (cap_mutex_unlock(&m) != 0)
        return 2;
    if (cap_mutex_trylock(&m) != 0)
        return 3; /* handed off to the parent's waiter */
    if (cap_mutex_unlock(&m) != 0)
        return 4;
    join(spawn(lock_once, NULL));
    return cap_mutex_destroy(&m) == 0 ? 0 : 5;
}

int main(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    cap_thread_t w = spawn(waiter, NULL);
    while (!atomic_load(&waiter_ready))
        cap_sleep_ns(HOLD_NS);
    cap_sleep_ns(HOLD_NS); /* let it reach the lock and park */
    int rounds = 0;
    while (!(atomic_load((_Atomic uint32_t *)&m.state) & STARVING)) {
        CHECK_EQ(cap_mutex_unlock(&m), 0); /* wakes the waiter... */
        CHECK_EQ(cap_mutex_lock(&m), 0);   /* ...and barges past it */
        if (atomic_load(&waiter_in) || ++rounds == HOLDER_ROUNDS) {
            /* it got in first (on another worker), or never flagged */
            fprintf(stderr, "no starving waiter after %d rounds: skipped\n", rounds);
            CHECK_EQ(cap_mutex_unlock(&m), 0);
            join(w);
            return 77;
        }
        cap_sleep_ns(HOLD_NS); /* the waiter runs now and finds the lock taken */
    }
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0)
        _exit(child());
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0); /* hands it to the waiter */
    join(w);
    CHECK_EQ(atomic_load(&waiter_in), 1);
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    return 0;
}

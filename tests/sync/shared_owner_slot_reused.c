/* SPDX-License-Identifier: MIT */
/* Description: a thread that exits holding a process-shared recursive or
 * error-checking mutex, or a process-shared read-write lock for writing,
 * is not mistaken for a later thread that reuses its slot (same handle
 * low half, next generation): that thread's try-lock gets EBUSY, its
 * unlock EPERM and its timed locks time out, as with private objects and
 * NPTL (whose holder ids are thread ids). Before, a shared object's
 * holder id was the process id and the slot only, so the new thread was
 * taken for the holder: a recursive try-lock succeeded, an unlock freed
 * the dead thread's lock, a timed lock said EDEADLK. */
#include <stdint.h>

#include "util.h"

enum { TRIES = 1000 };

struct shared {
    cap_mutex_t rec, err;
    cap_rwlock_t rw;
};

static struct shared *sh;
static cap_thread_t holder;
static int probed;

static void *take_and_exit(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&sh->rec), 0);
    CHECK_EQ(cap_mutex_lock(&sh->err), 0);
    CHECK_EQ(cap_rwlock_wrlock(&sh->rw), 0);
    return NULL; /* exits holding all three */
}

/* Runs the checks only on the holder's slot, reused. */
static void *probe(void *arg)
{
    (void)arg;
    cap_thread_t self = cap_thread_self();
    if ((uint32_t)self != (uint32_t)holder || self == holder)
        return NULL;
    struct timespec past = ts_after(CLOCK_REALTIME, -10);
    CHECK_EQ(cap_mutex_trylock(&sh->rec), EBUSY);
    CHECK_EQ(cap_mutex_unlock(&sh->rec), EPERM);
    CHECK_EQ(cap_mutex_timedlock(&sh->rec, &past), ETIMEDOUT);
    CHECK_EQ(cap_mutex_trylock(&sh->err), EBUSY);
    CHECK_EQ(cap_mutex_unlock(&sh->err), EPERM);
    CHECK_EQ(cap_mutex_timedlock(&sh->err, &past), ETIMEDOUT);
    CHECK_EQ(cap_rwlock_trywrlock(&sh->rw), EBUSY);
    CHECK_EQ(cap_rwlock_timedwrlock(&sh->rw, &past), ETIMEDOUT);
    CHECK_EQ(cap_rwlock_timedrdlock(&sh->rw, &past), ETIMEDOUT);
    CHECK_EQ(cap_rwlock_unlock(&sh->rw), EPERM);
    probed = 1;
    return NULL;
}

int main(void)
{
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->rec, CAP_MUTEX_RECURSIVE);
    shared_mutex_init(&sh->err, CAP_MUTEX_ERRORCHECK);
    cap_rwlockattr_t a;
    CHECK_EQ(cap_rwlockattr_init(&a), 0);
    CHECK_EQ(cap_rwlockattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_rwlock_init(&sh->rw, &a), 0);

    holder = spawn(take_and_exit, NULL);
    join(holder);
    /* A finished thread's slot is taken again soon (a worker keeps its
     * finished threads for reuse); try until a thread gets it. */
    for (int i = 0; i < TRIES && !probed; i++)
        join(spawn(probe, NULL));
    CHECK_EQ(probed, 1);
    return 0;
}

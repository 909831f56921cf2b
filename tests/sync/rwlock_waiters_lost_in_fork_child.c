/* SPDX-License-Identifier: MIT */
/* Description: rwlocks held across fork() while threads of the parent
 * wait on them: in the child those waiters do not exist, and their counts
 * must not keep the child's threads out or take the child's wake-ups.
 * A PREFER_WRITER lock, write-held by the forking thread with a writer
 * and a reader of the parent queued: after the child's unlock a reader
 * gets in at once (a counted ghost writer would keep every reader out),
 * from a new thread too, and destroy finds it idle. A PREFER_READER lock,
 * write-held with a reader of the parent queued: a writer of the child,
 * parked behind a child's reader, gets it when that reader leaves (the
 * dispatch would wake only the ghost reader). In the parent the queued
 * threads get their turns as usual. The child hangs without the fix: an
 * alarm kills it. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "util.h"

enum { POLL_NS = 100 * 1000, CHILD_ALARM_S = 20 };

static cap_rwlock_t wp = CAP_RWLOCK_INITIALIZER;
static cap_rwlock_t rp = CAP_RWLOCK_PREFER_READER_INITIALIZER;
static atomic_int done;

static uint32_t count(uint32_t *field)
{
    return atomic_load((_Atomic uint32_t *)(void *)field);
}

static void wait_count(uint32_t *field, uint32_t want)
{
    while (count(field) != want)
        cap_sleep_ns(POLL_NS);
}

static void *reader(void *arg)
{
    cap_rwlock_t *rw = arg;
    CHECK_EQ(cap_rwlock_rdlock(rw), 0);
    CHECK_EQ(cap_rwlock_unlock(rw), 0);
    atomic_fetch_add(&done, 1);
    return NULL;
}

static void *writer(void *arg)
{
    cap_rwlock_t *rw = arg;
    CHECK_EQ(cap_rwlock_wrlock(rw), 0);
    CHECK_EQ(cap_rwlock_unlock(rw), 0);
    atomic_fetch_add(&done, 1);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none). */
static int child(void)
{
    alarm(CHILD_ALARM_S);
    if (cap_rwlock_unlock(&wp) != 0)
        return 2;
    if (cap_rwlock_tryrdlock(&wp) != 0)
        return 3; /* kept out by the parent's writer */
    if (cap_rwlock_unlock(&wp) != 0)
        return 4;
    join(spawn(reader, &wp));
    join(spawn(writer, &wp));
    if (cap_rwlock_destroy(&wp) != 0)
        return 5;

    if (cap_rwlock_unlock(&rp) != 0)
        return 6;
    if (cap_rwlock_rdlock(&rp) != 0)
        return 7;
    cap_thread_t w = spawn(writer, &rp);
    wait_count(&rp.wwait, 1);
    if (cap_rwlock_unlock(&rp) != 0)
        return 8;
    join(w); /* hangs if the dispatch woke only the parent's reader */
    return cap_rwlock_destroy(&rp) == 0 ? 0 : 9;
}

int main(void)
{
    CHECK_EQ(cap_rwlock_wrlock(&wp), 0);
    CHECK_EQ(cap_rwlock_wrlock(&rp), 0);
    cap_thread_t t[3];
    t[0] = spawn(writer, &wp);
    wait_count(&wp.wwait, 1);
    t[1] = spawn(reader, &wp);
    wait_count(&wp.rwait, 1);
    t[2] = spawn(reader, &rp);
    wait_count(&rp.rwait, 1);

    run_in_fork_child(child);

    CHECK_EQ(cap_rwlock_unlock(&wp), 0);
    CHECK_EQ(cap_rwlock_unlock(&rp), 0);
    for (int i = 0; i < 3; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&done), 3);
    CHECK_EQ(cap_rwlock_destroy(&wp), 0);
    CHECK_EQ(cap_rwlock_destroy(&rp), 0);
    return 0;
}

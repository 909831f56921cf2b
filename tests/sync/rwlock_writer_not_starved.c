/* SPDX-License-Identifier: MIT */
/* Description: by default a waiting writer blocks new readers, so readers
 * cannot starve it: while a reader holds the lock and a writer waits, a
 * new tryrdlock fails with EBUSY; once the reader leaves, the writer gets
 * the lock before a reader that asked after it. (A reader-preferring lock
 * would keep letting readers in and the test would time out.) */
#include <stdatomic.h>

#include "util.h"

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;
static atomic_int writer_asking, writer_done, late_reader_saw_writer;

static void *writer(void *arg)
{
    (void)arg;
    atomic_store(&writer_asking, 1);
    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    atomic_store(&writer_done, 1);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

static void *late_reader(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    atomic_store(&late_reader_saw_writer, atomic_load(&writer_done));
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    cap_thread_t w = spawn(writer, NULL);
    while (!atomic_load(&writer_asking))
        cap_yield();
    /* The writer is about to wait, or waits: readers must now queue. A
     * reader-preferring lock would return 0 here forever. */
    int rc;
    while ((rc = cap_rwlock_tryrdlock(&rw)) == 0) {
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
        cap_yield();
    }
    CHECK_EQ(rc, EBUSY);
    cap_thread_t r = spawn(late_reader, NULL);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* the late reader queues behind the writer */
    CHECK_EQ(atomic_load(&writer_done), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    join(w);
    join(r);
    CHECK_EQ(atomic_load(&late_reader_saw_writer), 1);
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    return 0;
}

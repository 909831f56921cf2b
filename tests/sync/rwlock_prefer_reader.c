/* SPDX-License-Identifier: MIT */
/* Description: with kind CAP_RWLOCK_PREFER_READER, readers keep entering
 * while a writer waits (so a thread may take its read lock again), and
 * the writer gets in once the last reader leaves. The kind attribute
 * reads back and refuses unknown kinds and process sharing. */
#include <stdatomic.h>

#include "util.h"

static cap_rwlock_t rw;
static atomic_int writer_asking, writer_done;

static void *writer(void *arg)
{
    (void)arg;
    atomic_store(&writer_asking, 1);
    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    atomic_store(&writer_done, 1);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

int main(void)
{
    cap_rwlockattr_t a;
    int v = -1;
    CHECK_EQ(cap_rwlockattr_init(&a), 0);
    CHECK_EQ(cap_rwlockattr_getkind(&a, &v), 0);
    CHECK_EQ(v, CAP_RWLOCK_PREFER_WRITER);
    CHECK_EQ(cap_rwlockattr_setkind(&a, 77), EINVAL);
    CHECK_EQ(cap_rwlockattr_setkind(&a, CAP_RWLOCK_PREFER_READER), 0);
    CHECK_EQ(cap_rwlockattr_getkind(&a, &v), 0);
    CHECK_EQ(v, CAP_RWLOCK_PREFER_READER);
    CHECK_EQ(cap_rwlockattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_PRIVATE);
    CHECK_EQ(cap_rwlockattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_rwlockattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, CAP_PROCESS_SHARED);
    CHECK_EQ(cap_rwlockattr_setpshared(&a, -3), EINVAL);
    CHECK_EQ(cap_rwlockattr_setpshared(&a, CAP_PROCESS_PRIVATE), 0);
    CHECK_EQ(cap_rwlock_init(&rw, &a), 0);
    CHECK_EQ(cap_rwlockattr_destroy(&a), 0);

    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    cap_thread_t w = spawn(writer, NULL);
    while (!atomic_load(&writer_asking))
        cap_yield();
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(cap_rwlock_tryrdlock(&rw), 0);
        CHECK_EQ(cap_rwlock_rdlock(&rw), 0); /* recursive read: fine here */
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
        cap_yield();
    }
    CHECK_EQ(atomic_load(&writer_done), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    join(w);
    CHECK_EQ(atomic_load(&writer_done), 1);

    cap_rwlock_t s = CAP_RWLOCK_PREFER_READER_INITIALIZER;
    CHECK_EQ(cap_rwlock_rdlock(&s), 0);
    CHECK_EQ(cap_rwlock_rdlock(&s), 0);
    CHECK_EQ(cap_rwlock_unlock(&s), 0);
    CHECK_EQ(cap_rwlock_unlock(&s), 0);
    CHECK_EQ(cap_rwlock_destroy(&s), 0);
    return 0;
}

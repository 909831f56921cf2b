/* SPDX-License-Identifier: MIT */
/* Description: 2,000 readers and 500 writers share a read-write lock.
 * Writers move a value between two counters (a invariant: a + b == 0
 * while nobody writes) and count their rounds; readers check the
 * invariant and that no writer is inside. All counts are exact. */
#include <stdatomic.h>

#include "util.h"

enum { READERS = 2000, WRITERS = 500, ROUNDS = 20 };

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;
static long a, b, writes;
static atomic_int writers_inside, readers_inside;
static atomic_long reads;

static void *reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
        atomic_fetch_add(&readers_inside, 1);
        CHECK_EQ(atomic_load(&writers_inside), 0);
        CHECK_EQ(a + b, 0);
        if (i % 4 == 0)
            cap_yield(); /* hold it across a switch */
        CHECK_EQ(a + b, 0);
        atomic_fetch_add(&reads, 1);
        atomic_fetch_sub(&readers_inside, 1);
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
        CHECK_EQ(atomic_fetch_add(&writers_inside, 1), 0);
        CHECK_EQ(atomic_load(&readers_inside), 0);
        a++;
        if (i % 2 == 0)
            cap_yield(); /* readers must not see a + b == 1 */
        b--;
        writes++;
        atomic_fetch_sub(&writers_inside, 1);
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[READERS + WRITERS];
    int n = 0;
    for (int i = 0; i < READERS + WRITERS; i++)
        t[n++] = spawn(i % 5 == 4 ? writer : reader, NULL);
    for (int i = 0; i < n; i++)
        join(t[i]);
    CHECK_EQ(writes, (long)WRITERS * ROUNDS);
    CHECK_EQ(atomic_load(&reads), (long)READERS * ROUNDS);
    CHECK_EQ(a, (long)WRITERS * ROUNDS);
    CHECK_EQ(a + b, 0);
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    return 0;
}

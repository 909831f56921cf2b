/* SPDX-License-Identifier: MIT */
/* Description: thread-specific values are per thread; destructors run at
 * thread exit for non-NULL values only, repeat while a destructor sets a
 * new value (up to CAP_DESTRUCTOR_ITERATIONS), and never run for a deleted
 * key; a deleted key's slot, when reused, shows no old value. */
#include <capriccio.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { THREADS = 200 };

static cap_key_t key_a, key_b, key_dead;
static long destroyed_a, destroyed_b, destroyed_dead;
static atomic_int values_set, key_deleted;
static int b_rounds;

static void destroy_a(void *v)
{
    __atomic_fetch_add(&destroyed_a, (intptr_t)v, __ATOMIC_RELAXED);
}

static void destroy_b(void *v)
{
    /* Re-arms itself twice: the runtime must call it three times. */
    destroyed_b++;
    if (++b_rounds % 3 != 0)
        CHECK_EQ(cap_setspecific(key_b, v), 0);
}

static void destroy_dead(void *v)
{
    destroyed_dead++;
}

static void *body(void *arg)
{
    intptr_t id = (intptr_t)arg;
    CHECK(cap_getspecific(key_a) == NULL);
    CHECK_EQ(cap_setspecific(key_a, (void *)id), 0);
    CHECK_EQ(cap_setspecific(key_dead, (void *)1), 0);
    atomic_fetch_add(&values_set, 1);
    while (!atomic_load(&key_deleted))
        cap_yield();
    CHECK_EQ((intptr_t)cap_getspecific(key_a), id); /* not another thread's */
    return NULL;
}

static void *rearming(void *arg)
{
    CHECK_EQ(cap_setspecific(key_b, (void *)1), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_key_create(&key_a, destroy_a), 0);
    CHECK_EQ(cap_key_create(&key_b, destroy_b), 0);
    CHECK_EQ(cap_key_create(&key_dead, destroy_dead), 0);

    cap_thread_t t[THREADS];
    long expect = 0;
    for (intptr_t i = 0; i < THREADS; i++) {
        CHECK_EQ(cap_thread_create(&t[i], NULL, body, (void *)(i + 1)), 0);
        expect += i + 1;
    }
    /* Delete key_dead while the threads hold values for it. */
    while (atomic_load(&values_set) < THREADS)
        cap_yield();
    CHECK_EQ(cap_key_delete(key_dead), 0);
    atomic_store(&key_deleted, 1);
    CHECK_EQ(cap_key_delete(key_dead), EINVAL);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(__atomic_load_n(&destroyed_a, __ATOMIC_RELAXED), expect);
    CHECK_EQ(destroyed_dead, 0);

    cap_thread_t r;
    CHECK_EQ(cap_thread_create(&r, NULL, rearming, NULL), 0);
    CHECK_EQ(cap_thread_join(r, NULL), 0);
    CHECK_EQ(destroyed_b, 3);

    /* A new key in the deleted slot starts empty for everyone. */
    cap_key_t reused;
    CHECK_EQ(cap_key_create(&reused, NULL), 0);
    CHECK(cap_getspecific(reused) == NULL);
    CHECK_EQ(cap_setspecific(CAP_KEYS_MAX + 5, NULL), EINVAL);
    CHECK(cap_getspecific(CAP_KEYS_MAX + 5) == NULL);
    return 0;
}

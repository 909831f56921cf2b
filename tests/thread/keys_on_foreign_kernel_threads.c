/* SPDX-License-Identifier: MIT */
/* Description: the library's thread-specific data (cap_key_create, the
 * header's pthread_key_create) works on kernel threads the library does
 * not run, as on its own threads: one made by glibc's pthread_create (as
 * jemalloc makes its background thread, through dlsym) sets and reads its
 * own values, never sees a user thread's or another kernel thread's, and
 * its destructors run when it ends (re-armed ones again, up to
 * CAP_DESTRUCTOR_ITERATIONS rounds), not for a deleted key. Before, its
 * set failed with EPERM and its get said NULL (Redis built with the
 * header and jemalloc printed "Error setting tsd" at every start). */
#include <capriccio.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { KTHREADS = 8 };

static cap_key_t key_a, key_b, key_gone;
static atomic_long destroyed_a, destroyed_b, destroyed_gone;
static atomic_int b_rounds[KTHREADS];
static atomic_int ready;   /* kernel threads that set their values */
static atomic_int release; /* main deleted key_gone: they may end */

static void destroy_a(void *v)
{
    atomic_fetch_add(&destroyed_a, (long)(intptr_t)v);
}

/* Re-arms itself twice on each thread: it must run three times there. */
static void destroy_b(void *v)
{
    int i = (int)(intptr_t)v - 1;
    atomic_fetch_add(&destroyed_b, 1);
    if (atomic_fetch_add(&b_rounds[i], 1) < 2)
        CHECK_EQ(cap_setspecific(key_b, v), 0);
}

static void destroy_gone(void *v)
{
    (void)v;
    atomic_fetch_add(&destroyed_gone, 1);
}

static void *kernel_thread(void *arg)
{
    intptr_t i = (intptr_t)arg;
    CHECK(cap_getspecific(key_a) == NULL); /* not main's */
    CHECK_EQ(cap_setspecific(key_a, (void *)(i + 1)), 0);
    CHECK_EQ(cap_setspecific(key_b, (void *)(i + 1)), 0);
    CHECK_EQ(cap_setspecific(key_gone, (void *)1), 0);
    atomic_fetch_add(&ready, 1);
    while (!atomic_load(&release)) {
        CHECK(cap_getspecific(key_a) == (void *)(i + 1)); /* others' sets do not show */
        sched_yield();
    }
    CHECK(cap_getspecific(key_gone) == NULL); /* deleted */
    CHECK_EQ(cap_setspecific(CAP_KEYS_MAX, NULL), EINVAL);
    return NULL;
}

static void *user_thread(void *arg)
{
    (void)arg;
    CHECK(cap_getspecific(key_a) == NULL);
    CHECK_EQ(cap_setspecific(key_a, (void *)1000), 0);
    CHECK(cap_getspecific(key_a) == (void *)1000);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_key_create(&key_a, destroy_a), 0);
    CHECK_EQ(cap_key_create(&key_b, destroy_b), 0);
    CHECK_EQ(cap_key_create(&key_gone, destroy_gone), 0);
    CHECK_EQ(cap_setspecific(key_a, (void *)7), 0); /* main's own */

    pthread_t k[KTHREADS];
    cap_thread_t u[KTHREADS];
    for (intptr_t i = 0; i < KTHREADS; i++) {
        CHECK_EQ(pthread_create(&k[i], NULL, kernel_thread, (void *)i), 0);
        CHECK_EQ(cap_thread_create(&u[i], NULL, user_thread, NULL), 0);
    }
    for (int i = 0; i < KTHREADS; i++)
        CHECK_EQ(cap_thread_join(u[i], NULL), 0);
    /* The user threads' values were destroyed as they ended. */
    CHECK_EQ(atomic_load(&destroyed_a), 1000L * KTHREADS);
    while (atomic_load(&ready) != KTHREADS)
        cap_yield();
    CHECK_EQ(cap_key_delete(key_gone), 0);
    atomic_store(&release, 1);
    for (int i = 0; i < KTHREADS; i++)
        CHECK_EQ(pthread_join(k[i], NULL), 0);

    /* Sum of 1..KTHREADS from the kernel threads, besides the user threads'. */
    CHECK_EQ(atomic_load(&destroyed_a), 1000L * KTHREADS + KTHREADS * (KTHREADS + 1) / 2);
    CHECK_EQ(atomic_load(&destroyed_b), 3L * KTHREADS);
    CHECK_EQ(atomic_load(&destroyed_gone), 0);
    CHECK(cap_getspecific(key_a) == (void *)7);
    return 0;
}

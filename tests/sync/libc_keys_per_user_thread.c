/* SPDX-License-Identifier: MIT */
/* Description: glibc's thread-specific data (pthread_key_create,
 * pthread_getspecific, pthread_setspecific, and C11's tss_*, as code
 * built with glibc's headers uses them: OpenSSL keeps its error queue
 * this way) is per user thread. Several user threads set their own value
 * of one key, park, and read their own value back; each value's
 * destructor runs once, when its thread exits; a thread made with glibc's
 * pthread_create keeps its own value; a deleted key reads NULL. glibc
 * keeps values per kernel thread, so before the library paired glibc's
 * keys with its own, user threads sharing a worker read each other's
 * values (with one worker: every thread read the last one set). */
#include <pthread.h>
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>

#include "util.h"

enum { THREADS = 8 };

static pthread_key_t key;
static tss_t tkey;
static atomic_int destroyed[THREADS + 1], tss_destroyed;
static int ids[THREADS + 1]; /* ids[i] == i: a distinct address per thread */

static void destroy(void *v)
{
    atomic_fetch_add(&destroyed[*(int *)v], 1);
}

static void tss_destroy(void *v)
{
    (void)v;
    atomic_fetch_add(&tss_destroyed, 1);
}

static void *user(void *arg)
{
    int *id = arg;
    CHECK(pthread_getspecific(key) == NULL);
    CHECK(tss_get(tkey) == NULL);
    CHECK_EQ(pthread_setspecific(key, id), 0);
    CHECK_EQ(tss_set(tkey, id), thrd_success);
    for (int i = 0; i < 5; i++) {
        usleep(1000); /* the others run and set theirs meanwhile */
        CHECK(pthread_getspecific(key) == id);
        CHECK(tss_get(tkey) == id);
    }
    return NULL;
}

static void *foreign(void *arg)
{
    int *id = arg;
    CHECK_EQ(pthread_setspecific(key, id), 0);
    usleep(5000);
    CHECK(pthread_getspecific(key) == id);
    return NULL;
}

int main(void)
{
    for (int i = 0; i <= THREADS; i++)
        ids[i] = i;
    CHECK_EQ(pthread_key_create(&key, destroy), 0);
    CHECK_EQ(tss_create(&tkey, tss_destroy), thrd_success);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(user, &ids[i]);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, &ids[THREADS]), 0);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(pthread_join(f, NULL), 0);
    for (int i = 0; i <= THREADS; i++)
        CHECK_EQ(atomic_load(&destroyed[i]), 1); /* the foreign one by glibc */
    CHECK_EQ(atomic_load(&tss_destroyed), THREADS);

    /* main's own value; then a deleted key reads NULL */
    CHECK(pthread_getspecific(key) == NULL);
    CHECK_EQ(pthread_setspecific(key, &ids[0]), 0);
    CHECK(pthread_getspecific(key) == &ids[0]);
    CHECK_EQ(pthread_setspecific(key, NULL), 0);
    CHECK_EQ(pthread_key_delete(key), 0);
    CHECK(pthread_getspecific(key) == NULL);
    CHECK_EQ(pthread_setspecific(key, &ids[0]), EINVAL);
    tss_delete(tkey);
    return 0;
}

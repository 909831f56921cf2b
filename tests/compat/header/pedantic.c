/* SPDX-License-Identifier: MIT */
/*
 * A pthread program that uses the header's shims (threads, attributes,
 * mutexes, conditions, semaphores, once, keys, cancellation, the GNU
 * joins, and in C the C11 threads), compiled with the forced include
 * under -pedantic-errors -Wall -Wextra -Werror in each language mode the
 * header supports (docs/pthread-compat.md, "Language modes"). Compiled
 * only: a warning the header draws breaks a build that uses -Werror.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <time.h>
#if !defined(__cplusplus)
#include <threads.h>
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static sem_t sem;
static int value;

static void make_key(void)
{
    pthread_key_create(&key, NULL);
}

static void *run(void *arg)
{
    pthread_once(&once, make_key);
    pthread_setspecific(key, arg);
    pthread_mutex_lock(&lock);
    value++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    sem_post(&sem);
    pthread_testcancel();
    return arg;
}

#if !defined(__cplusplus)
static int run_c11(void *arg)
{
    return arg != NULL;
}
#endif

int main(void)
{
    pthread_attr_t attr;
    pthread_t t;
    void *out = NULL;
    struct timespec later;
    int rc = 0;
    sem_init(&sem, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    rc |= pthread_create(&t, &attr, run, NULL);
    pthread_attr_destroy(&attr);
    sem_wait(&sem);
    clock_gettime(CLOCK_REALTIME, &later);
    later.tv_sec += 10;
    rc |= pthread_timedjoin_np(t, &out, &later);
    pthread_mutex_lock(&lock);
    while (value == 0)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
#if !defined(__cplusplus)
    {
        thrd_t c;
        int res = 0;
        rc |= thrd_create(&c, run_c11, NULL) != thrd_success;
        rc |= thrd_join(c, &res) != thrd_success;
    }
#endif
    sem_destroy(&sem);
    return rc != 0 || out != NULL;
}

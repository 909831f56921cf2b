/* SPDX-License-Identifier: MIT */
/* Description: while a kernel thread the library did not make is alive
 * (here made with glibc's pthread_create, as a third-party library's
 * helper thread is), every user thread may park with nothing else
 * pending, and no deadlock is reported: that thread wakes them later.
 * Before, the runtime's report ("all threads are parked", exit status 2)
 * fired as soon as the user threads parked: on a glibc condition
 * variable, on a glibc mutex the foreign thread held, and on a
 * semaphore of the library's own API that it posted. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static cap_sem_t sem;
static int ready; /* [m] */
static atomic_int holding;

static void *foreign(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&held), 0);
    atomic_store(&holding, 1);
    usleep(100 * 1000); /* the user threads park meanwhile */
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    ready = 1;
    CHECK_EQ(pthread_cond_broadcast(&c), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    usleep(100 * 1000);
    CHECK_EQ(pthread_mutex_unlock(&held), 0);
    usleep(100 * 1000);
    CHECK_EQ(cap_sem_post(&sem), 0);
    return NULL;
}

static void *locker(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&held), 0); /* parks until the foreign thread lets go */
    CHECK_EQ(pthread_mutex_unlock(&held), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    while (!atomic_load(&holding))
        cap_yield();
    cap_thread_t l = spawn(locker, NULL);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    while (!ready)
        CHECK_EQ(pthread_cond_wait(&c, &m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    join(l);
    CHECK_EQ(cap_sem_wait(&sem), 0);
    CHECK_EQ(pthread_join(f, NULL), 0);
    return 0;
}

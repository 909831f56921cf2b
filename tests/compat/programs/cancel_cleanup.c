/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in pthread_cond_wait is cancelled; its
 * cleanup handlers run innermost first, the outer one unlocking the mutex
 * the wait re-acquired; join reports PTHREAD_CANCELED. A thread that
 * disables cancellation finishes normally despite a request. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int waiting;
static char trail[8];
static int n;

static void unlock(void *arg)
{
    trail[n++] = 'u';
    pthread_mutex_unlock(arg);
}

static void note(void *arg)
{
    trail[n++] = *(char *)arg;
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock, &m);
    pthread_cleanup_push(note, "n");
    waiting = 1;
    for (;;)
        pthread_cond_wait(&c, &m);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *stubborn(void *arg)
{
    (void)arg;
    int old;
    EXPECT_EQ(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old), 0);
    EXPECT_EQ(old, PTHREAD_CANCEL_ENABLE);
    pthread_cancel(pthread_self());
    usleep(1000);
    pthread_testcancel();
    return (void *)7;
}

int main(void)
{
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, waiter, NULL), 0);
    for (;;) {
        pthread_mutex_lock(&m);
        int w = waiting;
        pthread_mutex_unlock(&m);
        if (w)
            break;
        usleep(100);
    }
    EXPECT_EQ(pthread_cancel(t), 0);
    void *ret = NULL;
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    trail[n] = 0;
    EXPECT_EQ(strcmp(trail, "nu"), 0);
    EXPECT_EQ(pthread_mutex_trylock(&m), 0);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);

    EXPECT_EQ(pthread_create(&t, NULL, stubborn, NULL), 0);
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == (void *)7);
    return 0;
}

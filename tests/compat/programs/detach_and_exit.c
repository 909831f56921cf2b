/* SPDX-License-Identifier: MIT */
/* Description: pthread_exit's value reaches pthread_join; detached threads
 * (by attribute and by pthread_detach) run to completion; pthread_equal
 * and pthread_self agree; a joinable thread cannot be joined twice; and
 * thread attributes report what was set. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "check.h"

static sem_t done;
static pthread_t seen_self;

static void *exits(void *arg)
{
    seen_self = pthread_self();
    pthread_exit((char *)arg + 1);
    return NULL;
}

static void *detached(void *arg)
{
    (void)arg;
    sem_post(&done);
    return NULL;
}

int main(void)
{
    char buf[2];
    pthread_t t;
    void *ret = NULL;
    EXPECT_EQ(sem_init(&done, 0, 0), 0);
    EXPECT_EQ(pthread_create(&t, NULL, exits, buf), 0);
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == buf + 1);
    EXPECT(pthread_equal(t, seen_self));
    EXPECT(!pthread_equal(t, pthread_self()));
    EXPECT(pthread_equal(pthread_self(), pthread_self()));
    EXPECT_EQ(pthread_join(pthread_self(), NULL), EDEADLK);

    pthread_attr_t a;
    int state = -1;
    size_t size = 0;
    EXPECT_EQ(pthread_attr_init(&a), 0);
    EXPECT_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
    EXPECT_EQ(pthread_attr_getdetachstate(&a, &state), 0);
    EXPECT_EQ(state, PTHREAD_CREATE_DETACHED);
    EXPECT_EQ(pthread_attr_setstacksize(&a, 256 * 1024), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&a, &size), 0);
    EXPECT_EQ(size, 256 * 1024);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(pthread_create(&t, &a, detached, NULL), 0);
    EXPECT_EQ(pthread_attr_destroy(&a), 0);
    for (int i = 0; i < 20; i++) {
        EXPECT_EQ(pthread_create(&t, NULL, detached, NULL), 0);
        EXPECT_EQ(pthread_detach(t), 0);
    }
    for (int i = 0; i < 40; i++)
        EXPECT_EQ(sem_wait(&done), 0);
    return 0;
}

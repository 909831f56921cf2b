/* SPDX-License-Identifier: MIT */
/* Description: pthread_getattr_np describes the thread asked about, not a
 * fresh attribute object: the stack it runs on (pthread_attr_getstack
 * gives a range that holds its locals, at least as large as the size it
 * was created with), and its detach state, whether set by the creation
 * attribute or by pthread_detach later. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_getattr_np */
#endif
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

#include "check.h"

enum { STACK_ASKED = 4 << 20 };

struct seen {
    int detach_state;
    int holds_local;
    size_t size;
};

static sem_t done;

/* Fills *out from pthread_getattr_np of the calling thread. */
static void look(struct seen *out)
{
    int local = 0;
    pthread_attr_t a;
    void *addr = NULL;
    EXPECT_EQ(pthread_getattr_np(pthread_self(), &a), 0);
    EXPECT_EQ(pthread_attr_getdetachstate(&a, &out->detach_state), 0);
    EXPECT_EQ(pthread_attr_getstack(&a, &addr, &out->size), 0);
    out->holds_local = (char *)&local >= (char *)addr && (char *)&local < (char *)addr + out->size;
    EXPECT_EQ(pthread_attr_destroy(&a), 0);
}

static void *looker(void *arg)
{
    look(arg);
    return NULL;
}

static void *detaches_then_looks(void *arg)
{
    EXPECT_EQ(pthread_detach(pthread_self()), 0);
    look(arg);
    sem_post(&done);
    return NULL;
}

static void *detached_looker(void *arg)
{
    look(arg);
    sem_post(&done);
    return NULL;
}

int main(void)
{
    struct seen s;
    pthread_t t;
    pthread_attr_t a;
    EXPECT_EQ(sem_init(&done, 0, 0), 0);
    EXPECT_EQ(pthread_attr_init(&a), 0);
    EXPECT_EQ(pthread_attr_setstacksize(&a, STACK_ASKED), 0);

    EXPECT_EQ(pthread_create(&t, &a, looker, &s), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(s.detach_state, PTHREAD_CREATE_JOINABLE);
    EXPECT(s.holds_local);
    EXPECT(s.size >= STACK_ASKED);

    EXPECT_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
    EXPECT_EQ(pthread_create(&t, &a, detached_looker, &s), 0);
    EXPECT_EQ(sem_wait(&done), 0);
    EXPECT_EQ(s.detach_state, PTHREAD_CREATE_DETACHED);
    EXPECT(s.holds_local);

    EXPECT_EQ(pthread_create(&t, NULL, detaches_then_looks, &s), 0);
    EXPECT_EQ(sem_wait(&done), 0);
    EXPECT_EQ(s.detach_state, PTHREAD_CREATE_DETACHED);
    EXPECT(s.holds_local);

    look(&s); /* main */
    EXPECT_EQ(s.detach_state, PTHREAD_CREATE_JOINABLE);
    EXPECT(s.holds_local);
    EXPECT_EQ(pthread_attr_destroy(&a), 0);
    return 0;
}

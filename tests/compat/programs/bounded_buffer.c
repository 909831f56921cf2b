/* SPDX-License-Identifier: MIT */
/* Description: producers and consumers around a bounded buffer with one
 * mutex and two condition variables (signal and broadcast); every item is
 * delivered exactly once. */
#include <pthread.h>

#include "check.h"

enum { PRODUCERS = 50, CONSUMERS = 50, ITEMS = 400, SLOTS = 8 };

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty;
static long ring[SLOTS];
static int head, used;
static long total, received;

static void *produce(void *arg)
{
    long base = (long)arg * ITEMS;
    for (long i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (used == SLOTS)
            pthread_cond_wait(&not_full, &m);
        ring[(head + used++) % SLOTS] = base + i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *consume(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (used == 0)
            pthread_cond_wait(&not_empty, &m);
        total += ring[head];
        head = (head + 1) % SLOTS;
        used--;
        received++;
        if (i % 2)
            pthread_cond_broadcast(&not_full);
        else
            pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t p[PRODUCERS], c[CONSUMERS];
    EXPECT_EQ(pthread_cond_init(&not_empty, NULL), 0);
    for (long i = 0; i < CONSUMERS; i++)
        EXPECT_EQ(pthread_create(&c[i], NULL, consume, NULL), 0);
    for (long i = 0; i < PRODUCERS; i++)
        EXPECT_EQ(pthread_create(&p[i], NULL, produce, (void *)i), 0);
    for (int i = 0; i < PRODUCERS; i++)
        EXPECT_EQ(pthread_join(p[i], NULL), 0);
    for (int i = 0; i < CONSUMERS; i++)
        EXPECT_EQ(pthread_join(c[i], NULL), 0);
    long n = (long)PRODUCERS * ITEMS;
    EXPECT_EQ(received, n);
    EXPECT_EQ(total, n * (n + 1) / 2);
    EXPECT_EQ(pthread_cond_destroy(&not_empty), 0);
    EXPECT_EQ(pthread_cond_destroy(&not_full), 0);
    return 0;
}

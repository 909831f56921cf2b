/* SPDX-License-Identifier: MIT */
/* Description: 1,000 producers and 1,000 consumers pass 100,000 items
 * through a bounded buffer guarded by one mutex and two condition
 * variables (the paper's Figure 1 workload); every item arrives exactly
 * once (count and checksum). */
#include "util.h"

enum { PAIRS = 1000, PER_THREAD = 100, SLOTS = 16 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t not_full = CAP_COND_INITIALIZER, not_empty = CAP_COND_INITIALIZER;
static long buf[SLOTS];
static int head, count;
static long consumed, sum;

static void *producer(void *arg)
{
    long base = (long)(intptr_t)arg * PER_THREAD;
    for (long i = 0; i < PER_THREAD; i++) {
        CHECK_EQ(cap_mutex_lock(&m), 0);
        while (count == SLOTS)
            CHECK_EQ(cap_cond_wait(&not_full, &m), 0);
        buf[(head + count) % SLOTS] = base + i + 1;
        count++;
        CHECK_EQ(cap_cond_signal(&not_empty), 0);
        CHECK_EQ(cap_mutex_unlock(&m), 0);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        CHECK_EQ(cap_mutex_lock(&m), 0);
        while (count == 0)
            CHECK_EQ(cap_cond_wait(&not_empty, &m), 0);
        long v = buf[head];
        head = (head + 1) % SLOTS;
        count--;
        consumed++;
        sum += v;
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        CHECK_EQ(cap_cond_signal(&not_full), 0); /* outside the lock, on purpose */
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        t[2 * i] = spawn(consumer, NULL);
        t[2 * i + 1] = spawn(producer, (void *)(intptr_t)i);
    }
    for (int i = 0; i < 2 * PAIRS; i++)
        join(t[i]);
    long n = (long)PAIRS * PER_THREAD;
    CHECK_EQ(consumed, n);
    CHECK_EQ(sum, n * (n + 1) / 2);
    CHECK_EQ(count, 0);
    return 0;
}

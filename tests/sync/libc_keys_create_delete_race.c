/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_key_create and pthread_key_delete racing
 * on two user threads (on two workers where there are two): glibc hands
 * a deleted key's number to the next create at once, and every glibc key
 * is paired with one of the library's. Afterwards no library key is left
 * over, every create succeeded, and a key made last is per user thread.
 * The first wrapper undid the pair after glibc's delete, so it could undo
 * (and delete the library key of) the pair a create on the other thread
 * had just made with the same number: keys leaked until every create
 * failed with EAGAIN, and the new key's values were glibc's, shared by
 * a worker's user threads. */
#include <pthread.h>
#include <stdatomic.h>

#include "util.h"

enum { ROUNDS = 200000 };

static void *loop(void *arg)
{
    (void)arg;
    for (int n = 1; n <= ROUNDS; n++) {
        pthread_key_t k;
        CHECK_EQ(pthread_key_create(&k, NULL), 0);
        CHECK_EQ(pthread_key_delete(k), 0);
        if (n % 1024 == 0)
            cap_yield();
    }
    return NULL;
}

static pthread_key_t last;

static void *own_value(void *arg)
{
    CHECK_EQ(pthread_setspecific(last, arg), 0);
    cap_yield();
    CHECK(pthread_getspecific(last) == arg);
    return NULL;
}

int main(void)
{
    cap_thread_t t[2];
    for (int i = 0; i < 2; i++)
        t[i] = spawn(loop, NULL);
    for (int i = 0; i < 2; i++)
        join(t[i]);
    /* every library key is free again */
    cap_key_t k[CAP_KEYS_MAX];
    int free_keys = 0;
    while (free_keys < CAP_KEYS_MAX && cap_key_create(&k[free_keys], NULL) == 0)
        free_keys++;
    CHECK_EQ(free_keys, CAP_KEYS_MAX);
    for (int i = 0; i < free_keys; i++)
        CHECK_EQ(cap_key_delete(k[i]), 0);
    CHECK_EQ(pthread_key_create(&last, NULL), 0);
    static int a, b;
    cap_thread_t x = spawn(own_value, &a), y = spawn(own_value, &b);
    join(x);
    join(y);
    CHECK_EQ(pthread_key_delete(last), 0);
    return 0;
}

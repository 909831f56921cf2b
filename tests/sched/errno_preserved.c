/* SPDX-License-Identifier: MIT */
/* Description: errno belongs to the user thread: values set before a
 * yield or a sleep are intact after it, while many other threads set
 * their own errno values on the same workers. */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>

#include "check.h"

enum { THREADS = 64, ROUNDS = 200 };

static void *churn(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        int mine = (int)(id * 1000 + r + 1);
        errno = mine;
        if (r % 10 == 0)
            cap_sleep_ns(10000);
        else
            cap_yield();
        CHECK_EQ(errno, mine);
    }
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
    errno = 4242;
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
        CHECK_EQ(errno, 4242);
    }
    /* A new thread starts with errno 0, not its creator's. */
    errno = 99;
    cap_thread_t z;
    CHECK_EQ(cap_thread_create(&z, NULL, churn, (void *)0), 0);
    CHECK_EQ(cap_thread_join(z, NULL), 0);
    CHECK_EQ(errno, 99);
    return 0;
}

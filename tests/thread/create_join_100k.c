/* SPDX-License-Identifier: MIT */
/* Description: 100,000 threads created and joined, in batches so many are
 * alive at once; every return value arrives at the right joiner. */
#include <capriccio.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

enum { TOTAL = 100000, BATCH = 5000 };

static void *square(void *arg)
{
    intptr_t v = (intptr_t)arg;
    if (v % 7 == 0)
        cap_yield();
    return (void *)(v * v);
}

int main(void)
{
    cap_thread_t *ids = malloc(BATCH * sizeof *ids);
    CHECK(ids != NULL);
    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, 32 * 1024), 0);
    long joined = 0;
    for (intptr_t base = 0; base < TOTAL; base += BATCH) {
        for (intptr_t i = 0; i < BATCH; i++)
            CHECK_EQ(cap_thread_create(&ids[i], &attr, square, (void *)(base + i)), 0);
        for (intptr_t i = 0; i < BATCH; i++) {
            void *ret;
            CHECK_EQ(cap_thread_join(ids[i], &ret), 0);
            CHECK_EQ((intptr_t)ret, (base + i) * (base + i));
            joined++;
        }
    }
    CHECK_EQ(joined, TOTAL);
    free(ids);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a created thread runs, its return value reaches join, and
 * join of a finished thread also works. */
#include <capriccio.h>
#include <stdint.h>

#include "check.h"

static void *add_one(void *arg)
{
    return (void *)((intptr_t)arg + 1);
}

int main(void)
{
    CHECK_NE(cap_thread_self(), 0);
    for (intptr_t i = 0; i < 100; i++) {
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, add_one, (void *)i), 0);
        if (i % 2)
            cap_yield(); /* sometimes let it finish before we join */
        void *ret = NULL;
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK_EQ((intptr_t)ret, i + 1);
    }
    return 0;
}

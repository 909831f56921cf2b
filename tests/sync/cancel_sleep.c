/* SPDX-License-Identifier: MIT */
/* Description: a thread sleeping for an hour (cap_sleep_ns, and one in
 * cap_usleep) is cancelled: it ends with CAP_CANCELED at once, running its
 * cleanup handler (without cancellation the test would time out). */
#include <stdatomic.h>

#include "util.h"

static atomic_int cleaned;
static cap_sem_t going;

static void note(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *sleeper(void *arg)
{
    int use_usleep = (int)(intptr_t)arg;
    cap_cleanup_push(note, NULL);
    CHECK_EQ(cap_sem_post(&going), 0);
    if (use_usleep)
        cap_usleep(3600ull * 1000000);
    else
        cap_sleep_ns(3600ull * 1000000000);
    cap_cleanup_pop(0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&going, 0, 0), 0);
    for (int i = 0; i < 2; i++) {
        cap_thread_t t = spawn(sleeper, (void *)(intptr_t)i);
        CHECK_EQ(cap_sem_wait(&going), 0);
        if (i == 1)
            cap_sleep_ns(2000000); /* let this one be asleep for sure */
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK(join(t) == CAP_CANCELED);
        CHECK_EQ(atomic_load(&cleaned), i + 1);
    }
    return 0;
}

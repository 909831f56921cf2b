/* SPDX-License-Identifier: MIT */
/* Description: dlerror() reports the calling thread's last loader error,
 * once, though the user threads of a worker share one kernel thread,
 * whose dlerror state glibc keeps: threads whose dlopen or dlsym fails
 * and that yield or sleep before dlerror read their own message, while
 * others' successful dlsym calls in between neither clear it nor read
 * it; threads that end with a message unread, or after a failure and a
 * success, leak nothing (the sanitized run checks) and leave main
 * none. */
#include <capriccio.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { THREADS = 48, ROUNDS = 100 };

static void pause_a_little(intptr_t id, int r)
{
    if ((id + r) % 2 == 0)
        CHECK_EQ(cap_yield(), 0);
    else
        CHECK_EQ(cap_sleep_ns((uint64_t)(id % 5) * 1000), 0);
}

static void *loader(void *arg)
{
    intptr_t id = (intptr_t)arg;
    char name[64];
    for (int r = 0; r < ROUNDS; r++) {
        switch ((id + r) % 3) {
        case 0: /* a failing dlopen, its message read after a pause */
            snprintf(name, sizeof name, "/nonexistent/libcaptest-%d-%d.so", (int)id, r);
            CHECK(dlopen(name, RTLD_NOW) == NULL);
            pause_a_little(id, r);
            break;
        case 1: /* a failing dlsym, likewise */
            snprintf(name, sizeof name, "captest_missing_%d_%d", (int)id, r);
            CHECK(dlsym(RTLD_DEFAULT, name) == NULL);
            pause_a_little(id, r);
            break;
        default: /* a dlsym that succeeds: no message, before or after a pause */
            CHECK(dlsym(RTLD_DEFAULT, "snprintf") != NULL);
            pause_a_little(id, r);
            CHECK(dlerror() == NULL);
            continue;
        }
        const char *msg = dlerror();
        CHECK(msg != NULL);
        if (strstr(msg, name) == NULL) {
            fprintf(stderr, "thread %d round %d: expected a message naming %s, got: %s\n",
                    (int)id, r, name, msg);
            return (void *)1;
        }
        CHECK(dlerror() == NULL); /* reported once */
    }
    switch (id % 3) {
    case 0: /* ends with a message unread */
        CHECK(dlopen("/nonexistent/libcaptest-end.so", RTLD_NOW) == NULL);
        break;
    case 1: /* ends after a failure and a success */
        CHECK(dlsym(RTLD_DEFAULT, "captest_missing_at_end") == NULL);
        CHECK(dlsym(RTLD_DEFAULT, "snprintf") != NULL);
        break;
    default:
        break;
    }
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, loader, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK(ret == NULL);
    }
    CHECK(dlerror() == NULL); /* none of theirs is main's */

    /* Main's own, across a pause in which another thread fails too. */
    CHECK(dlopen("/nonexistent/libcaptest-main.so", RTLD_NOW) == NULL);
    cap_thread_t other;
    CHECK_EQ(cap_thread_create(&other, NULL, loader, (void *)0), 0);
    CHECK_EQ(cap_sleep_ns(1000000), 0);
    CHECK_EQ(cap_thread_join(other, NULL), 0);
    const char *msg = dlerror();
    CHECK(msg != NULL && strstr(msg, "libcaptest-main.so") != NULL);
    CHECK(dlerror() == NULL);
    return 0;
}

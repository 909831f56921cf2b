/* SPDX-License-Identifier: MIT */
/* Description: thread names from attributes and setname, ERANGE for long
 * names, attribute validation (stack size bounds, detach state values),
 * and what cap_thread_getattr and cap_thread_getstack report. */
#include <capriccio.h>
#include <errno.h>
#include <string.h>

#include "check.h"

static void *check_own_name(void *arg)
{
    char buf[CAP_THREAD_NAME_MAX];
    CHECK_EQ(cap_thread_getname(cap_thread_self(), buf, sizeof buf), 0);
    CHECK(strcmp(buf, "conn-17") == 0);
    cap_thread_attr_t now;
    void *lo;
    size_t size;
    CHECK_EQ(cap_thread_getattr(cap_thread_self(), &now), 0);
    CHECK(strcmp(now.name, "conn-17") == 0);
    CHECK_EQ(now.detach_state, CAP_CREATE_JOINABLE);
    CHECK_EQ(cap_thread_getstack(cap_thread_self(), &lo, &size), 0);
    CHECK_EQ(size, now.stack_size);
    CHECK_GE(size, 64 * 1024);
    CHECK((char *)buf >= (char *)lo && (char *)buf < (char *)lo + size);
    return NULL;
}

int main(void)
{
    cap_thread_attr_t attr;
    size_t size;
    int state;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, CAP_STACK_MIN - 1), EINVAL);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, CAP_STACK_MAX + 1), EINVAL);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, 64 * 1024), 0);
    CHECK_EQ(cap_thread_attr_getstacksize(&attr, &size), 0);
    CHECK_EQ(size, 64 * 1024);
    CHECK_EQ(cap_thread_attr_setdetachstate(&attr, 7), EINVAL);
    CHECK_EQ(cap_thread_attr_getdetachstate(&attr, &state), 0);
    CHECK_EQ(state, CAP_CREATE_JOINABLE);
    CHECK_EQ(cap_thread_attr_setname(&attr, "a-name-that-is-far-too-long"), ERANGE);
    CHECK_EQ(cap_thread_attr_setname(&attr, "conn-17"), 0);

    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, &attr, check_own_name, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    char buf[CAP_THREAD_NAME_MAX];
    CHECK_EQ(cap_thread_getname(cap_thread_self(), buf, sizeof buf), 0);
    CHECK(strcmp(buf, "main") == 0);
    CHECK_EQ(cap_thread_setname(cap_thread_self(), "boss"), 0);
    CHECK_EQ(cap_thread_getname(cap_thread_self(), buf, sizeof buf), 0);
    CHECK(strcmp(buf, "boss") == 0);
    CHECK_EQ(cap_thread_getname(cap_thread_self(), buf, 3), ERANGE);
    CHECK_EQ(cap_thread_setname(cap_thread_self(), "0123456789abcdef"), ERANGE);
    CHECK_EQ(cap_thread_getname(t, buf, sizeof buf), ESRCH); /* joined: stale */
    cap_thread_attr_t stale;
    void *lo;
    CHECK_EQ(cap_thread_getattr(t, &stale), ESRCH);
    CHECK_EQ(cap_thread_getstack(t, &lo, &size), ESRCH);

    /* Bad arguments are errors, not crashes. */
    CHECK_EQ(cap_thread_create(NULL, NULL, check_own_name, NULL), EINVAL);
    CHECK_EQ(cap_thread_create(&t, NULL, NULL, NULL), EINVAL);
    attr.stack_size = 1; /* set behind the setter's back */
    CHECK_EQ(cap_thread_create(&t, &attr, check_own_name, NULL), EINVAL);
    CHECK_EQ(cap_thread_attr_destroy(&attr), 0);
    return 0;
}

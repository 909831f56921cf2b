/* SPDX-License-Identifier: MIT */
/* Description: uselocale() sets the calling thread's locale and no other
 * (POSIX), though the user threads of a worker share one kernel thread,
 * whose locale glibc keeps: threads that switch between a locale of
 * their own (C.UTF-8) and the global one ("C") across yields and sleeps
 * each see their own, through the locale object, MB_CUR_MAX,
 * nl_langinfo and towupper; a new thread starts with the global locale
 * whatever its creator uses; a thread that ends with a locale of its own
 * leaves the global one behind it; a fork's child keeps its caller's. */
#include <capriccio.h>
#include <langinfo.h>
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wctype.h>

#include "check.h"

enum { THREADS = 64, ROUNDS = 200 };

static locale_t utf8;

/* Whether the calling thread's locale is C.UTF-8 (else "C"), asked three
 * ways that read it from different places of glibc's per-thread state. */
static bool in_utf8(void)
{
    bool wide = MB_CUR_MAX == 6;
    bool named = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    bool cased = towupper(0xe9) == 0xc9; /* é to É: not in "C" */
    CHECK_EQ(named, wide);
    CHECK_EQ(cased, wide);
    return wide;
}

static locale_t expected(bool want)
{
    return want ? utf8 : LC_GLOBAL_LOCALE;
}

static void *switcher(void *arg)
{
    intptr_t id = (intptr_t)arg;
    bool had = false;
    CHECK(uselocale(NULL) == LC_GLOBAL_LOCALE);
    CHECK(!in_utf8());
    for (int r = 0; r < ROUNDS; r++) {
        bool want = (id + r) % 3 == 0;
        CHECK(uselocale(expected(want)) == expected(had));
        had = want;
        CHECK_EQ(in_utf8(), want);
        if (r % 2 == 0)
            CHECK_EQ(cap_yield(), 0);
        else
            CHECK_EQ(cap_sleep_ns((uint64_t)(id % 7) * 1000), 0);
        CHECK(uselocale(NULL) == expected(want));
        CHECK_EQ(in_utf8(), want);
    }
    /* Half of them end with C.UTF-8 still theirs. */
    uselocale(expected(id % 2 == 0));
    return (void *)(intptr_t)in_utf8();
}

static void *report(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)(uselocale(NULL) == LC_GLOBAL_LOCALE && !in_utf8());
}

int main(void)
{
    utf8 = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
    if (utf8 == (locale_t)0)
        SKIP("no C.UTF-8 locale");
    CHECK(!in_utf8());

    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, switcher, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK_EQ((intptr_t)ret, i % 2 == 0);
    }
    /* Those that ended in C.UTF-8 left the global locale to main. */
    CHECK(uselocale(NULL) == LC_GLOBAL_LOCALE);
    CHECK(!in_utf8());

    /* A new thread starts in the global locale, whatever its creator's. */
    CHECK(uselocale(utf8) == LC_GLOBAL_LOCALE);
    for (int i = 0; i < 8; i++) {
        cap_thread_t c;
        void *ret;
        CHECK_EQ(cap_thread_create(&c, NULL, report, NULL), 0);
        if (i % 2 == 0)
            CHECK_EQ(cap_yield(), 0); /* it may run before the join */
        CHECK_EQ(cap_thread_join(c, &ret), 0);
        CHECK_EQ((intptr_t)ret, 1);
        CHECK(in_utf8());
    }

    /* A fork's child goes on in its caller's locale, across its switches. */
    pid_t pid = fork();
    CHECK_NE(pid, -1);
    if (pid == 0) {
        cap_thread_t c;
        void *ret;
        if (!in_utf8() || cap_thread_create(&c, NULL, report, NULL) != 0 ||
            cap_thread_join(c, &ret) != 0 || ret != (void *)1 || !in_utf8() ||
            uselocale(NULL) != utf8)
            _exit(3);
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);

    CHECK(uselocale(LC_GLOBAL_LOCALE) == utf8);
    CHECK(!in_utf8());
    freelocale(utf8);
    return 0;
}

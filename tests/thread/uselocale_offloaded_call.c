/* SPDX-License-Identifier: MIT */
/* Description: a call the offload pool makes for a user thread runs in
 * that thread's locale (uselocale), and the pool thread gives it back
 * before the next job: a wide stream over a pipe is oriented and
 * converted where glibc's call runs, on the pool (intercept/
 * stdio_wide.c), so a thread in C.UTF-8 whose fputws and fclose went
 * there wrote '?' for an é, the global locale's ("C") conversion. Threads
 * switch between their own C.UTF-8 locale, one made and freed per round,
 * and the global locale, and each writes an é and a newline through a
 * new wide stream per round: in C.UTF-8 exactly its two UTF-8 bytes;
 * in "C" never those, and the same bytes every time (glibc's, whatever
 * they are: a job before it in C.UTF-8 must not change them). */
#include <capriccio.h>
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "check.h"

enum { THREADS = 16, ROUNDS = 40 };

static const char utf8_bytes[] = "\xc3\xa9\n";
/* The first "C" write's bytes, [first_lock] */
static char c_bytes[8];
static size_t c_len;
static bool c_seen;
static cap_mutex_t first_lock = CAP_MUTEX_INITIALIZER;

/* Writes an é and a newline to the pipe p through a new wide stream and
 * reads back what reached the pipe: its length, the bytes in out. */
static size_t write_e(const int p[2], char *out, size_t room)
{
    int fd = dup(p[1]);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK(f != NULL);
    CHECK(fputws(L"\u00e9\n", f) >= 0);
    CHECK_EQ(fclose(f), 0); /* the flush: glibc's call, on the pool */
    ssize_t n = read(p[0], out, room);
    CHECK(n > 0 && (size_t)n < room);
    return (size_t)n;
}

static void *writer(void *arg)
{
    intptr_t id = (intptr_t)arg;
    int p[2];
    CHECK_EQ(pipe(p), 0);
    for (int r = 0; r < ROUNDS; r++) {
        bool own = (id + r) % 2 == 0;
        locale_t mine = (locale_t)0;
        if (own) {
            mine = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
            CHECK(mine != (locale_t)0);
            CHECK(uselocale(mine) == LC_GLOBAL_LOCALE);
        }
        char got[8];
        size_t n = write_e(p, got, sizeof got);
        if (own) {
            CHECK_EQ(n, sizeof utf8_bytes - 1);
            CHECK(memcmp(got, utf8_bytes, n) == 0);
            /* Freed at once: the pool must hold it no more (ASan). */
            CHECK(uselocale(LC_GLOBAL_LOCALE) == mine);
            freelocale(mine);
        } else {
            CHECK(n != sizeof utf8_bytes - 1 || memcmp(got, utf8_bytes, n) != 0);
            CHECK_EQ(cap_mutex_lock(&first_lock), 0);
            if (!c_seen) {
                memcpy(c_bytes, got, n);
                c_len = n;
                c_seen = true;
            }
            CHECK_EQ(n, c_len);
            CHECK(memcmp(got, c_bytes, n) == 0);
            CHECK_EQ(cap_mutex_unlock(&first_lock), 0);
        }
        if (r % 3 == 0)
            CHECK_EQ(cap_yield(), 0);
    }
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return NULL;
}

int main(void)
{
    locale_t probe = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
    if (probe == (locale_t)0)
        SKIP("no C.UTF-8 locale");
    freelocale(probe);

    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, writer, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK(c_seen);
    /* main, in the global locale, after them all. */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    char got[8];
    size_t n = write_e(p, got, sizeof got);
    CHECK_EQ(n, c_len);
    CHECK(memcmp(got, c_bytes, n) == 0);
    return 0;
}

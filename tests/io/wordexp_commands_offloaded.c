/* SPDX-License-Identifier: MIT */
/* Description: wordexp() with a command substitution runs the command
 * while the caller's worker runs other threads (on CAP_WORKERS=1 too: a
 * ticker advances during the call; before, glibc's internal fork, read
 * and waitpid held the worker until the command ended). Many threads at
 * once each get their own command's output; expansions without commands,
 * WRDE_NOCMD and syntax errors answer as glibc does. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <wordexp.h>

#include "io/io_util.h"

enum { THREADS = 8, ROUNDS = 4 };

static void *expander(void *arg)
{
    long id = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        char words[64], want[32];
        snprintf(want, sizeof want, "t%ld-r%d", id, r);
        snprintf(words, sizeof words, "a $(echo %s) `echo b`", want);
        wordexp_t we;
        CHECK_EQ(wordexp(words, &we, 0), 0);
        CHECK_EQ(we.we_wordc, 3);
        CHECK(strcmp(we.we_wordv[0], "a") == 0);
        CHECK(strcmp(we.we_wordv[1], want) == 0);
        CHECK(strcmp(we.we_wordv[2], "b") == 0);
        wordfree(&we);
    }
    return NULL;
}

int main(void)
{
    ticker_start(1000000);
    cap_sleep_ns(5000000);

    /* One call whose command sleeps: the ticker runs meanwhile. */
    wordexp_t we;
    long t0 = ticker_ticks();
    CHECK_EQ(wordexp("$(sleep 0.05; echo slept)", &we, 0), 0);
    long t1 = ticker_ticks();
    CHECK_EQ(we.we_wordc, 1);
    CHECK(strcmp(we.we_wordv[0], "slept") == 0);
    wordfree(&we);
    CHECK_GT(t1, t0);

    cap_thread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        t[i] = spawn(expander, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);

    /* No command: expanded in place, as before. */
    CHECK_EQ(wordexp("one two", &we, 0), 0);
    CHECK_EQ(we.we_wordc, 2);
    wordfree(&we);
    CHECK_EQ(wordexp("$(echo no)", &we, WRDE_NOCMD), WRDE_CMDSUB);
    CHECK_EQ(wordexp("$(echo unclosed", &we, 0), WRDE_SYNTAX);

    ticker_stop();
    return 0;
}

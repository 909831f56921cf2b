/* SPDX-License-Identifier: MIT */
/* Description: the strings strerror, strerror_l and strsignal format for
 * numbers they have no fixed message for ("Unknown error 10007",
 * "Real-time signal 3", "Unknown signal 107") stay the calling thread's
 * until its next such call, as POSIX allows no other thread to overwrite
 * them: glibc formats them into a buffer of the kernel thread's, which
 * the user threads of a worker share, so a thread that parked before
 * reading its string found another thread's there. Threads each ask for
 * numbers of their own, then yield and sleep, then read the strings
 * (strerror's and strerror_l's one at a time: glibc gives both one
 * buffer); a fixed message (EINVAL's, SIGINT's) is glibc's string still. */
#include <capriccio.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { THREADS = 48, ROUNDS = 50 };

static locale_t c_locale;

static void *asker(void *arg)
{
    intptr_t id = (intptr_t)arg;
    int rt_span = SIGRTMAX - SIGRTMIN + 1;
    for (int r = 0; r < ROUNDS; r++) {
        int err = 10000 + (int)id * ROUNDS + r;
        int rt = (int)((id + r) % rt_span);
        int unknown_sig = 100 + (int)id; /* above every signal */
        char want_err[64], want_err_l[64], want_rt[64], want_sig[64];
        snprintf(want_err, sizeof want_err, "Unknown error %d", err);
        snprintf(want_err_l, sizeof want_err_l, "Unknown error %d", err + 1);
        snprintf(want_rt, sizeof want_rt, "Real-time signal %d", rt);
        snprintf(want_sig, sizeof want_sig, "Unknown signal %d", unknown_sig);
        /* glibc's strerror and strerror_l share one buffer: one at a time. */
        const char *e = strerror(err);
        const char *s = id % 2 == 0 ? strsignal(SIGRTMIN + rt) : strsignal(unknown_sig);
        CHECK_EQ(cap_yield(), 0);
        CHECK_EQ(cap_sleep_ns((uint64_t)(id % 5) * 1000), 0);
        CHECK_EQ(cap_yield(), 0);
        CHECK(strcmp(e, want_err) == 0);
        CHECK(strcmp(s, id % 2 == 0 ? want_rt : want_sig) == 0);
        const char *el = strerror_l(err + 1, c_locale);
        CHECK_EQ(cap_yield(), 0);
        CHECK(strcmp(el, want_err_l) == 0);
        /* Fixed messages: glibc's strings, one for every thread. */
        CHECK(strcmp(strerror(EINVAL), "Invalid argument") == 0);
        CHECK(strcmp(strsignal(SIGINT), "Interrupt") == 0);
    }
    return NULL;
}

int main(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    CHECK(c_locale != (locale_t)0);
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, asker, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    freelocale(c_locale);
    return 0;
}

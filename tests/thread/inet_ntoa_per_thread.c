/* SPDX-License-Identifier: MIT */
/* Description: the string inet_ntoa returns stays the calling thread's
 * until its next call, as glibc keeps it per thread, though the user
 * threads of a worker share one kernel thread, whose buffer glibc
 * formats into: threads that format their own addresses and yield or
 * sleep before they read the string back each find theirs; the result is
 * glibc's text for every address. */
#include <arpa/inet.h>
#include <capriccio.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { THREADS = 48, ROUNDS = 200 };

static void *formatter(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        char want[16];
        snprintf(want, sizeof want, "10.%d.%d.%d", (int)id, r, (int)(id * 7 + r) % 256);
        struct in_addr a;
        CHECK_EQ(inet_pton(AF_INET, want, &a), 1);
        const char *got = inet_ntoa(a);
        if (r % 2 == 0)
            CHECK_EQ(cap_yield(), 0);
        else
            CHECK_EQ(cap_sleep_ns((uint64_t)(id % 5) * 1000), 0);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "thread %d round %d: inet_ntoa gave %s, want %s\n", (int)id, r, got,
                    want);
            return (void *)1;
        }
    }
    return NULL;
}

int main(void)
{
    /* The text of the edge values, as glibc writes them. */
    struct in_addr a = { .s_addr = htonl(0xffffffffu) };
    CHECK(strcmp(inet_ntoa(a), "255.255.255.255") == 0);
    a.s_addr = htonl(0);
    CHECK(strcmp(inet_ntoa(a), "0.0.0.0") == 0);
    a.s_addr = htonl(0x7f000001u);
    CHECK(strcmp(inet_ntoa(a), "127.0.0.1") == 0);

    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, formatter, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK(ret == NULL);
    }
    return 0;
}

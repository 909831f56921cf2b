/* SPDX-License-Identifier: MIT */
/* Description: asynchronous name resolution's waits, which user threads
 * make on the offload pool (gai_suspend) or through it
 * (getaddrinfo_a(GAI_WAIT)), give glibc's results: a lookup of localhost
 * submitted with GAI_NOWAIT ends, gai_suspend returns 0 (or EAI_ALLDONE
 * if it ended first) and the request holds an address; GAI_WAIT returns
 * once both of its lookups (a name and a numeric address) have ended;
 * gai_suspend on ended requests or NULLs gives EAI_ALLDONE, as glibc's. Eight threads do
 * all of it at once. (That the waits park only their caller is not
 * shown: these lookups end too soon to tell; a pending cancel acting at
 * gai_suspend's entry is in cancel_pending_acts_at_entry.) Skipped where
 * /etc/hosts lacks localhost (hosts_file.h). */
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include "hosts_file.h"
#include "io/io_util.h"

static void check_loopback(const struct gaicb *r)
{
    CHECK(r->ar_result != NULL);
    bool loopback = false;
    for (struct addrinfo *a = r->ar_result; a != NULL; a = a->ai_next)
        if (a->ai_family == AF_INET &&
            ((struct sockaddr_in *)a->ai_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
            loopback = true;
    CHECK(loopback);
}

static void *lookups(void *arg)
{
    (void)arg;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
    struct gaicb one = { .ar_name = "localhost", .ar_request = &hints };
    struct gaicb *list[1] = { &one };
    CHECK_EQ(getaddrinfo_a(GAI_NOWAIT, list, 1, NULL), 0);
    const struct gaicb *wait_list[2] = { NULL, &one };
    int r = gai_suspend(wait_list, 2, NULL);
    CHECK(r == 0 || r == EAI_ALLDONE); /* (EAI_ALLDONE: it ended before the call) */
    CHECK_EQ(gai_error(&one), 0);
    check_loopback(&one);
    CHECK_EQ(gai_suspend(wait_list, 2, NULL), EAI_ALLDONE); /* ended: at once, as glibc */
    freeaddrinfo(one.ar_result);

    struct gaicb a = { .ar_name = "localhost", .ar_request = &hints };
    struct gaicb b = { .ar_name = "127.0.0.1", .ar_request = &hints };
    struct gaicb *both[2] = { &a, &b };
    CHECK_EQ(getaddrinfo_a(GAI_WAIT, both, 2, NULL), 0);
    CHECK_EQ(gai_error(&a), 0);
    CHECK_EQ(gai_error(&b), 0);
    check_loopback(&a);
    check_loopback(&b);
    freeaddrinfo(a.ar_result);
    freeaddrinfo(b.ar_result);

    const struct gaicb *none[2] = { NULL, NULL };
    CHECK_EQ(gai_suspend(none, 2, NULL), EAI_ALLDONE);
    return NULL;
}

int main(void)
{
    skip_unless_localhost_in_hosts_file();
    lookups(NULL);
    enum { THREADS = 8 };
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(lookups, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    return 0;
}

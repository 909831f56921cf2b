/* SPDX-License-Identifier: MIT */
/* Description: getaddrinfo("localhost") from many threads at once runs on
 * the offload pool: every call resolves, and a ticker thread keeps
 * running meanwhile (on CAP_WORKERS=1 too). getnameinfo and gethostbyname
 * work from user threads as well. Skipped where /etc/hosts lacks
 * localhost (hosts_file.h). */
#include <netdb.h>
#include <stdatomic.h>
#include <string.h>

#include "hosts_file.h"
#include "io/io_util.h"

enum { THREADS = 100 };

static void *resolve(void *arg)
{
    (void)arg;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
    CHECK_EQ(getaddrinfo("localhost", "80", &hints, &res), 0);
    CHECK(res != NULL);
    struct sockaddr_in *a = (struct sockaddr_in *)res->ai_addr;
    CHECK_EQ(ntohl(a->sin_addr.s_addr), INADDR_LOOPBACK);
    char host[64], serv[16];
    CHECK_EQ(getnameinfo(res->ai_addr, res->ai_addrlen, host, sizeof host, serv, sizeof serv,
                         NI_NUMERICHOST | NI_NUMERICSERV), 0);
    CHECK(strcmp(host, "127.0.0.1") == 0);
    freeaddrinfo(res);
    return NULL;
}

int main(void)
{
    skip_unless_localhost_in_hosts_file();
    ticker_start(100000);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(resolve, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    struct hostent *h = gethostbyname("localhost");
    CHECK(h != NULL);
    ticker_stop();
    CHECK_GT(ticker_ticks(), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: name and service look-ups give glibc's answers: numeric
 * hosts and services, "localhost" through /etc/hosts, a passive wildcard
 * address, the error codes for a name refused with AI_NUMERICHOST
 * (EAI_NONAME), an unknown service (EAI_SERVICE), a bad family
 * (EAI_FAMILY) and bad flags (EAI_BADFLAGS); getnameinfo of a numeric
 * address and port; from four threads at once. No network needed. Where
 * /etc/hosts lacks localhost (a bare chroot) the rest still runs, and the
 * test then reports itself skipped (hosts_file.h). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "../../hosts_file.h"

static bool have_localhost;

static void numeric(void)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    EXPECT_EQ(getaddrinfo("127.0.0.1", "8080", &hints, &res), 0);
    EXPECT(res != NULL && res->ai_next == NULL);
    struct sockaddr_in *in = (struct sockaddr_in *)res->ai_addr;
    EXPECT_EQ(in->sin_family, AF_INET);
    EXPECT_EQ(ntohs(in->sin_port), 8080);
    EXPECT_EQ(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);
    EXPECT_EQ(res->ai_protocol, IPPROTO_TCP);
    freeaddrinfo(res);

    hints.ai_flags = AI_PASSIVE;
    EXPECT_EQ(getaddrinfo(NULL, "443", &hints, &res), 0);
    in = (struct sockaddr_in *)res->ai_addr;
    EXPECT_EQ(ntohl(in->sin_addr.s_addr), INADDR_ANY);
    EXPECT_EQ(ntohs(in->sin_port), 443);
    freeaddrinfo(res);

    hints.ai_flags = AI_NUMERICHOST;
    EXPECT_EQ(getaddrinfo("localhost", NULL, &hints, &res), EAI_NONAME);
    hints.ai_flags = 0;
    EXPECT_EQ(getaddrinfo("127.0.0.1", "no-such-service-here", &hints, &res), EAI_SERVICE);
    hints.ai_family = 12345;
    EXPECT_EQ(getaddrinfo("127.0.0.1", NULL, &hints, &res), EAI_FAMILY);
    hints.ai_family = AF_INET;
    hints.ai_flags = 0x10000;
    EXPECT_EQ(getaddrinfo("127.0.0.1", NULL, &hints, &res), EAI_BADFLAGS);
    EXPECT(strlen(gai_strerror(EAI_NONAME)) > 0);
}

static void localhost(void)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    EXPECT_EQ(getaddrinfo("localhost", "53", &hints, &res), 0);
    int found = 0;
    for (struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        struct sockaddr_in *in = (struct sockaddr_in *)a->ai_addr;
        if (ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK && ntohs(in->sin_port) == 53)
            found = 1;
    }
    EXPECT_EQ(found, 1);
    freeaddrinfo(res);
}

static void reverse(void)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(8080),
                              .sin_addr.s_addr = htonl(0x7f000001) };
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    EXPECT_EQ(getnameinfo((struct sockaddr *)&in, sizeof in, host, sizeof host, serv,
                          sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV),
              0);
    EXPECT_EQ(strcmp(host, "127.0.0.1"), 0);
    EXPECT_EQ(strcmp(serv, "8080"), 0);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        numeric();
        if (have_localhost)
            localhost();
        reverse();
    }
    return NULL;
}

int main(void)
{
    have_localhost = localhost_in_hosts_file();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    if (!have_localhost)
        skip_unless_localhost_in_hosts_file(); /* exits 77, saying why */
    return 0;
}

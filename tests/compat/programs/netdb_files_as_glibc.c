/* SPDX-License-Identifier: MIT */
/* Description: service, netgroup, protocol, network, rpc, alias, host and
 * gshadow lookups in files the program writes (an empty /etc of its own,
 * in a mount namespace: mount_ns.h) answer as glibc's: getservbyname by
 * alias, getservbyport per protocol, the _r forms, getservent listing
 * every line, a netgroup's members in glibc's order (a nested group's own
 * first; "-" kept, an empty field NULL) through getnetgrent and
 * getnetgrent_r, innetgr's wildcards, an unknown netgroup, each other
 * database by key and enumerated, and four threads asking innetgr at once.
 * The library makes user threads take turns before the forms that hold a
 * lock of glibc's (intercept/nss.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getservent_r, the netgroup calls */
#endif
#include <aliases.h>
#include <arpa/inet.h>
#include <gshadow.h>
#include <netdb.h>
#include <nss.h>
#include <pthread.h>
#include <rpc/netdb.h>
#include <stdio.h>
#include <string.h>

#include "../../mount_ns.h"
#include "check.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    EXPECT(fputs(text, f) >= 0);
    EXPECT_EQ(fclose(f), 0);
}

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void *asker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        EXPECT_EQ(innetgr("trusted", "alpha", "ann", "example"), 1);
        EXPECT_EQ(innetgr("trusted", "alpha", "zed", "example"), 0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    (void)argc;
    mount_ns_enter(argv, (const char *const[]){ "/etc", NULL });
    write_file("/etc/services", "echo 7/tcp\necho 7/udp\nhttp 80/tcp www # web\n");
    write_file("/etc/netgroup", "trusted (alpha,ann,example) (beta,-,example) (,bob,)\n"
                                "nested trusted (gamma,carl,other)\n");
    write_file("/etc/protocols", "ip 0 IP\ntcp 6 TCP\nudp 17 UDP\n");
    write_file("/etc/networks", "loopback 127.0.0.0\nlink-local 169.254.0.0\n");
    write_file("/etc/rpc", "portmapper 100000 portmap sunrpc\nnfs 100003 nfsprog\n");
    write_file("/etc/aliases", "postmaster: root\nabuse: root, admin\n");
    write_file("/etc/hosts", "127.0.0.1 localhost\n10.0.0.1 alpha a\n");
    write_file("/etc/gshadow", "root:*::\nstaff:!::alice,bob\n");
    static const char *const dbs[] = { "services", "netgroup", "protocols", "networks",
                                       "rpc",      "aliases",  "hosts",     "gshadow" };
    for (size_t i = 0; i < sizeof dbs / sizeof dbs[0]; i++)
        EXPECT_EQ(__nss_configure_lookup(dbs[i], "files"), 0);

    struct servent *s = getservbyname("www", "tcp");
    EXPECT(s != NULL);
    EXPECT(strcmp(s->s_name, "http") == 0);
    EXPECT_EQ(ntohs(s->s_port), 80);
    EXPECT(getservbyname("www", "udp") == NULL);
    s = getservbyport(htons(7), "udp");
    EXPECT(s != NULL);
    EXPECT(strcmp(s->s_name, "echo") == 0 && strcmp(s->s_proto, "udp") == 0);
    struct servent se, *res = NULL;
    char buf[1024];
    EXPECT_EQ(getservbyname_r("http", "tcp", &se, buf, sizeof buf, &res), 0);
    EXPECT(res == &se && ntohs(se.s_port) == 80);
    EXPECT_EQ(getservbyport_r(htons(81), "tcp", &se, buf, sizeof buf, &res), 0);
    EXPECT(res == NULL);
    int lines = 0;
    setservent(0);
    while ((s = getservent()) != NULL)
        lines++;
    endservent();
    EXPECT_EQ(lines, 3);
    lines = 0;
    setservent(1);
    while (getservent_r(&se, buf, sizeof buf, &res) == 0 && res != NULL)
        lines++;
    endservent();
    EXPECT_EQ(lines, 3);

    static const char *const want[][3] = { { "gamma", "carl", "other" },
                                           { "alpha", "ann", "example" },
                                           { "beta", "-", "example" },
                                           { NULL, "bob", NULL } };
    for (int with_r = 0; with_r < 2; with_r++) {
        EXPECT_EQ(setnetgrent("nested"), 1);
        char *h, *u, *d;
        int n = 0;
        while (with_r ? getnetgrent_r(&h, &u, &d, buf, sizeof buf) : getnetgrent(&h, &u, &d)) {
            EXPECT(n < 4);
            EXPECT(same(h, want[n][0]) && same(u, want[n][1]) && same(d, want[n][2]));
            n++;
        }
        EXPECT_EQ(n, 4);
        endnetgrent();
    }
    EXPECT_EQ(innetgr("trusted", "gamma", NULL, NULL), 1); /* (,bob,): any host */
    EXPECT_EQ(innetgr("trusted", "gamma", "carl", NULL), 0);
    EXPECT_EQ(innetgr("nested", "gamma", "carl", "other"), 1);
    EXPECT_EQ(setnetgrent("unknown"), 0);
    endnetgrent();

    /* The databases nscd does not serve. */
    struct protoent *pe = getprotobyname("tcp");
    EXPECT(pe != NULL && pe->p_proto == 6);
    pe = getprotobynumber(17);
    EXPECT(pe != NULL && strcmp(pe->p_name, "udp") == 0);
    lines = 0;
    setprotoent(0);
    while (getprotoent() != NULL)
        lines++;
    endprotoent();
    EXPECT_EQ(lines, 3);
    struct netent *ne = getnetbyname("loopback");
    EXPECT(ne != NULL && ne->n_net == 0x7f000000);
    ne = getnetbyaddr(0xa9fe0000, AF_INET);
    EXPECT(ne != NULL && strcmp(ne->n_name, "link-local") == 0);
    lines = 0;
    setnetent(0);
    while (getnetent() != NULL)
        lines++;
    endnetent();
    EXPECT_EQ(lines, 2);
    struct rpcent *re = getrpcbyname("nfs");
    EXPECT(re != NULL && re->r_number == 100003);
    re = getrpcbynumber(100000);
    EXPECT(re != NULL && strcmp(re->r_name, "portmapper") == 0);
    lines = 0;
    setrpcent(0);
    while (getrpcent() != NULL)
        lines++;
    endrpcent();
    EXPECT_EQ(lines, 2);
    struct aliasent *ae = getaliasbyname("abuse");
    EXPECT(ae != NULL && ae->alias_members_len == 2);
    EXPECT(strcmp(ae->alias_members[1], "admin") == 0);
    lines = 0;
    setaliasent();
    while (getaliasent() != NULL)
        lines++;
    endaliasent();
    EXPECT_EQ(lines, 2);
    lines = 0;
    sethostent(0);
    struct hostent *he;
    while ((he = gethostent()) != NULL)
        lines++;
    endhostent();
    EXPECT_EQ(lines, 2);
    struct sgrp *sg = getsgnam("staff");
    EXPECT(sg != NULL && sg->sg_mem[0] != NULL && strcmp(sg->sg_mem[1], "bob") == 0);
    lines = 0;
    setsgent();
    while (getsgent() != NULL)
        lines++;
    endsgent();
    EXPECT_EQ(lines, 2);

    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, asker, NULL), 0);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Lookups in the name-service databases nscd does not serve: protocols,
 * networks, rpc, aliases, gshadow and the hosts enumeration. Their by-key
 * calls without _r and their enumeration calls hold a lock of glibc's
 * own across the module's call, as the user lookups' do (nss.h): a user
 * thread takes that lock's turn first, with cancellation disabled, and
 * makes glibc's call in place. Their modules seldom ask a daemon (nis and
 * ldap can), so the turn is mostly uncontended: a few loads and stores.
 * The _r by-key forms hold no lock and stay glibc's. From a thread the
 * library does not run, or a signal handler, glibc's call as it is
 * (cap__nss_turn_begin, nss.h).
 */
#include <aliases.h>
#include <gshadow.h>
#include <netdb.h>
#include <rpc/netdb.h>
#include <stdint.h>

#include "intercept/intercept.h"
#include "intercept/nss.h"

/* ---- protocols ------------------------------------------------------------- */

struct protoent *getprotobyname(const char *name)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOBYNAME);
    struct protoent *e = CAP__REAL(getprotobyname)(name);
    cap__nss_turn_end(t);
    return e;
}

struct protoent *getprotobynumber(int proto)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOBYNUMBER);
    struct protoent *e = CAP__REAL(getprotobynumber)(proto);
    cap__nss_turn_end(t);
    return e;
}

void setprotoent(int stayopen)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOENT);
    CAP__REAL(setprotoent)(stayopen);
    cap__nss_turn_end(t);
}

struct protoent *getprotoent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOENT);
    struct protoent *e = CAP__REAL(getprotoent)();
    cap__nss_turn_end(t);
    return e;
}

int getprotoent_r(struct protoent *entry, char *buf, size_t buflen, struct protoent **result)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOENT);
    int r = CAP__REAL(getprotoent_r)(entry, buf, buflen, result);
    cap__nss_turn_end(t);
    return r;
}

void endprotoent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_PROTOENT);
    CAP__REAL(endprotoent)();
    cap__nss_turn_end(t);
}

/* ---- networks -------------------------------------------------------------- */

struct netent *getnetbyname(const char *name)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETBYNAME);
    struct netent *e = CAP__REAL(getnetbyname)(name);
    cap__nss_turn_end(t);
    return e;
}

struct netent *getnetbyaddr(uint32_t net, int type)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETBYADDR);
    struct netent *e = CAP__REAL(getnetbyaddr)(net, type);
    cap__nss_turn_end(t);
    return e;
}

void setnetent(int stayopen)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETENT);
    CAP__REAL(setnetent)(stayopen);
    cap__nss_turn_end(t);
}

struct netent *getnetent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETENT);
    struct netent *e = CAP__REAL(getnetent)();
    cap__nss_turn_end(t);
    return e;
}

int getnetent_r(struct netent *entry, char *buf, size_t buflen, struct netent **result,
                int *h_errnop)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETENT);
    int r = CAP__REAL(getnetent_r)(entry, buf, buflen, result, h_errnop);
    cap__nss_turn_end(t);
    return r;
}

void endnetent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_NETENT);
    CAP__REAL(endnetent)();
    cap__nss_turn_end(t);
}

/* ---- rpc ------------------------------------------------------------------- */

struct rpcent *getrpcbyname(const char *name)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCBYNAME);
    struct rpcent *e = CAP__REAL(getrpcbyname)(name);
    cap__nss_turn_end(t);
    return e;
}

struct rpcent *getrpcbynumber(int number)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCBYNUMBER);
    struct rpcent *e = CAP__REAL(getrpcbynumber)(number);
    cap__nss_turn_end(t);
    return e;
}

void setrpcent(int stayopen)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCENT);
    CAP__REAL(setrpcent)(stayopen);
    cap__nss_turn_end(t);
}

struct rpcent *getrpcent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCENT);
    struct rpcent *e = CAP__REAL(getrpcent)();
    cap__nss_turn_end(t);
    return e;
}

int getrpcent_r(struct rpcent *entry, char *buf, size_t buflen, struct rpcent **result)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCENT);
    int r = CAP__REAL(getrpcent_r)(entry, buf, buflen, result);
    cap__nss_turn_end(t);
    return r;
}

void endrpcent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_RPCENT);
    CAP__REAL(endrpcent)();
    cap__nss_turn_end(t);
}

/* ---- aliases --------------------------------------------------------------- */

struct aliasent *getaliasbyname(const char *name)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_ALIASBYNAME);
    struct aliasent *e = CAP__REAL(getaliasbyname)(name);
    cap__nss_turn_end(t);
    return e;
}

void setaliasent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_ALIASENT);
    CAP__REAL(setaliasent)();
    cap__nss_turn_end(t);
}

struct aliasent *getaliasent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_ALIASENT);
    struct aliasent *e = CAP__REAL(getaliasent)();
    cap__nss_turn_end(t);
    return e;
}

int getaliasent_r(struct aliasent *entry, char *buf, size_t buflen, struct aliasent **result)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_ALIASENT);
    int r = CAP__REAL(getaliasent_r)(entry, buf, buflen, result);
    cap__nss_turn_end(t);
    return r;
}

void endaliasent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_ALIASENT);
    CAP__REAL(endaliasent)();
    cap__nss_turn_end(t);
}

/* ---- gshadow --------------------------------------------------------------- */

struct sgrp *getsgnam(const char *name)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_SGNAM);
    struct sgrp *e = CAP__REAL(getsgnam)(name);
    cap__nss_turn_end(t);
    return e;
}

void setsgent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_SGENT);
    CAP__REAL(setsgent)();
    cap__nss_turn_end(t);
}

struct sgrp *getsgent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_SGENT);
    struct sgrp *e = CAP__REAL(getsgent)();
    cap__nss_turn_end(t);
    return e;
}

int getsgent_r(struct sgrp *entry, char *buf, size_t buflen, struct sgrp **result)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_SGENT);
    int r = CAP__REAL(getsgent_r)(entry, buf, buflen, result);
    cap__nss_turn_end(t);
    return r;
}

void endsgent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_SGENT);
    CAP__REAL(endsgent)();
    cap__nss_turn_end(t);
}

/* ---- the hosts enumeration (by-key host lookups: resolve.c) ---------------- */

void sethostent(int stayopen)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_HOSTENT);
    CAP__REAL(sethostent)(stayopen);
    cap__nss_turn_end(t);
}

struct hostent *gethostent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_HOSTENT);
    struct hostent *e = CAP__REAL(gethostent)();
    cap__nss_turn_end(t);
    return e;
}

int gethostent_r(struct hostent *entry, char *buf, size_t buflen, struct hostent **result,
                 int *h_errnop)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_HOSTENT);
    int r = CAP__REAL(gethostent_r)(entry, buf, buflen, result, h_errnop);
    cap__nss_turn_end(t);
    return r;
}

void endhostent(void)
{
    cap__nss_turn t = cap__nss_turn_begin(CAP__NSS_HOSTENT);
    CAP__REAL(endhostent)();
    cap__nss_turn_end(t);
}

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
 * library does not run, or a signal handler, glibc's call as it is.
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
    if (!cap__ic_user())
        return CAP__REAL(getprotobyname)(name);
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOBYNAME);
    struct protoent *e = CAP__REAL(getprotobyname)(name);
    cap__nss_turn_give(CAP__NSS_PROTOBYNAME, cancel_state);
    return e;
}

struct protoent *getprotobynumber(int proto)
{
    if (!cap__ic_user())
        return CAP__REAL(getprotobynumber)(proto);
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOBYNUMBER);
    struct protoent *e = CAP__REAL(getprotobynumber)(proto);
    cap__nss_turn_give(CAP__NSS_PROTOBYNUMBER, cancel_state);
    return e;
}

void setprotoent(int stayopen)
{
    if (!cap__ic_user()) {
        CAP__REAL(setprotoent)(stayopen);
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOENT);
    CAP__REAL(setprotoent)(stayopen);
    cap__nss_turn_give(CAP__NSS_PROTOENT, cancel_state);
}

struct protoent *getprotoent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(getprotoent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOENT);
    struct protoent *e = CAP__REAL(getprotoent)();
    cap__nss_turn_give(CAP__NSS_PROTOENT, cancel_state);
    return e;
}

int getprotoent_r(struct protoent *entry, char *buf, size_t buflen, struct protoent **result)
{
    if (!cap__ic_user())
        return CAP__REAL(getprotoent_r)(entry, buf, buflen, result);
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOENT);
    int r = CAP__REAL(getprotoent_r)(entry, buf, buflen, result);
    cap__nss_turn_give(CAP__NSS_PROTOENT, cancel_state);
    return r;
}

void endprotoent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endprotoent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_PROTOENT);
    CAP__REAL(endprotoent)();
    cap__nss_turn_give(CAP__NSS_PROTOENT, cancel_state);
}

/* ---- networks -------------------------------------------------------------- */

struct netent *getnetbyname(const char *name)
{
    if (!cap__ic_user())
        return CAP__REAL(getnetbyname)(name);
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETBYNAME);
    struct netent *e = CAP__REAL(getnetbyname)(name);
    cap__nss_turn_give(CAP__NSS_NETBYNAME, cancel_state);
    return e;
}

struct netent *getnetbyaddr(uint32_t net, int type)
{
    if (!cap__ic_user())
        return CAP__REAL(getnetbyaddr)(net, type);
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETBYADDR);
    struct netent *e = CAP__REAL(getnetbyaddr)(net, type);
    cap__nss_turn_give(CAP__NSS_NETBYADDR, cancel_state);
    return e;
}

void setnetent(int stayopen)
{
    if (!cap__ic_user()) {
        CAP__REAL(setnetent)(stayopen);
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETENT);
    CAP__REAL(setnetent)(stayopen);
    cap__nss_turn_give(CAP__NSS_NETENT, cancel_state);
}

struct netent *getnetent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(getnetent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETENT);
    struct netent *e = CAP__REAL(getnetent)();
    cap__nss_turn_give(CAP__NSS_NETENT, cancel_state);
    return e;
}

int getnetent_r(struct netent *entry, char *buf, size_t buflen, struct netent **result,
                int *h_errnop)
{
    if (!cap__ic_user())
        return CAP__REAL(getnetent_r)(entry, buf, buflen, result, h_errnop);
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETENT);
    int r = CAP__REAL(getnetent_r)(entry, buf, buflen, result, h_errnop);
    cap__nss_turn_give(CAP__NSS_NETENT, cancel_state);
    return r;
}

void endnetent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endnetent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_NETENT);
    CAP__REAL(endnetent)();
    cap__nss_turn_give(CAP__NSS_NETENT, cancel_state);
}

/* ---- rpc ------------------------------------------------------------------- */

struct rpcent *getrpcbyname(const char *name)
{
    if (!cap__ic_user())
        return CAP__REAL(getrpcbyname)(name);
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCBYNAME);
    struct rpcent *e = CAP__REAL(getrpcbyname)(name);
    cap__nss_turn_give(CAP__NSS_RPCBYNAME, cancel_state);
    return e;
}

struct rpcent *getrpcbynumber(int number)
{
    if (!cap__ic_user())
        return CAP__REAL(getrpcbynumber)(number);
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCBYNUMBER);
    struct rpcent *e = CAP__REAL(getrpcbynumber)(number);
    cap__nss_turn_give(CAP__NSS_RPCBYNUMBER, cancel_state);
    return e;
}

void setrpcent(int stayopen)
{
    if (!cap__ic_user()) {
        CAP__REAL(setrpcent)(stayopen);
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCENT);
    CAP__REAL(setrpcent)(stayopen);
    cap__nss_turn_give(CAP__NSS_RPCENT, cancel_state);
}

struct rpcent *getrpcent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(getrpcent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCENT);
    struct rpcent *e = CAP__REAL(getrpcent)();
    cap__nss_turn_give(CAP__NSS_RPCENT, cancel_state);
    return e;
}

int getrpcent_r(struct rpcent *entry, char *buf, size_t buflen, struct rpcent **result)
{
    if (!cap__ic_user())
        return CAP__REAL(getrpcent_r)(entry, buf, buflen, result);
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCENT);
    int r = CAP__REAL(getrpcent_r)(entry, buf, buflen, result);
    cap__nss_turn_give(CAP__NSS_RPCENT, cancel_state);
    return r;
}

void endrpcent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endrpcent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_RPCENT);
    CAP__REAL(endrpcent)();
    cap__nss_turn_give(CAP__NSS_RPCENT, cancel_state);
}

/* ---- aliases --------------------------------------------------------------- */

struct aliasent *getaliasbyname(const char *name)
{
    if (!cap__ic_user())
        return CAP__REAL(getaliasbyname)(name);
    int cancel_state = cap__nss_turn_take(CAP__NSS_ALIASBYNAME);
    struct aliasent *e = CAP__REAL(getaliasbyname)(name);
    cap__nss_turn_give(CAP__NSS_ALIASBYNAME, cancel_state);
    return e;
}

void setaliasent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(setaliasent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_ALIASENT);
    CAP__REAL(setaliasent)();
    cap__nss_turn_give(CAP__NSS_ALIASENT, cancel_state);
}

struct aliasent *getaliasent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(getaliasent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_ALIASENT);
    struct aliasent *e = CAP__REAL(getaliasent)();
    cap__nss_turn_give(CAP__NSS_ALIASENT, cancel_state);
    return e;
}

int getaliasent_r(struct aliasent *entry, char *buf, size_t buflen, struct aliasent **result)
{
    if (!cap__ic_user())
        return CAP__REAL(getaliasent_r)(entry, buf, buflen, result);
    int cancel_state = cap__nss_turn_take(CAP__NSS_ALIASENT);
    int r = CAP__REAL(getaliasent_r)(entry, buf, buflen, result);
    cap__nss_turn_give(CAP__NSS_ALIASENT, cancel_state);
    return r;
}

void endaliasent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endaliasent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_ALIASENT);
    CAP__REAL(endaliasent)();
    cap__nss_turn_give(CAP__NSS_ALIASENT, cancel_state);
}

/* ---- gshadow --------------------------------------------------------------- */

struct sgrp *getsgnam(const char *name)
{
    if (!cap__ic_user())
        return CAP__REAL(getsgnam)(name);
    int cancel_state = cap__nss_turn_take(CAP__NSS_SGNAM);
    struct sgrp *e = CAP__REAL(getsgnam)(name);
    cap__nss_turn_give(CAP__NSS_SGNAM, cancel_state);
    return e;
}

void setsgent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(setsgent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_SGENT);
    CAP__REAL(setsgent)();
    cap__nss_turn_give(CAP__NSS_SGENT, cancel_state);
}

struct sgrp *getsgent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(getsgent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_SGENT);
    struct sgrp *e = CAP__REAL(getsgent)();
    cap__nss_turn_give(CAP__NSS_SGENT, cancel_state);
    return e;
}

int getsgent_r(struct sgrp *entry, char *buf, size_t buflen, struct sgrp **result)
{
    if (!cap__ic_user())
        return CAP__REAL(getsgent_r)(entry, buf, buflen, result);
    int cancel_state = cap__nss_turn_take(CAP__NSS_SGENT);
    int r = CAP__REAL(getsgent_r)(entry, buf, buflen, result);
    cap__nss_turn_give(CAP__NSS_SGENT, cancel_state);
    return r;
}

void endsgent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endsgent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_SGENT);
    CAP__REAL(endsgent)();
    cap__nss_turn_give(CAP__NSS_SGENT, cancel_state);
}

/* ---- the hosts enumeration (by-key host lookups: resolve.c) ---------------- */

void sethostent(int stayopen)
{
    if (!cap__ic_user()) {
        CAP__REAL(sethostent)(stayopen);
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_HOSTENT);
    CAP__REAL(sethostent)(stayopen);
    cap__nss_turn_give(CAP__NSS_HOSTENT, cancel_state);
}

struct hostent *gethostent(void)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostent)();
    int cancel_state = cap__nss_turn_take(CAP__NSS_HOSTENT);
    struct hostent *e = CAP__REAL(gethostent)();
    cap__nss_turn_give(CAP__NSS_HOSTENT, cancel_state);
    return e;
}

int gethostent_r(struct hostent *entry, char *buf, size_t buflen, struct hostent **result,
                 int *h_errnop)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostent_r)(entry, buf, buflen, result, h_errnop);
    int cancel_state = cap__nss_turn_take(CAP__NSS_HOSTENT);
    int r = CAP__REAL(gethostent_r)(entry, buf, buflen, result, h_errnop);
    cap__nss_turn_give(CAP__NSS_HOSTENT, cancel_state);
    return r;
}

void endhostent(void)
{
    if (!cap__ic_user()) {
        CAP__REAL(endhostent)();
        return;
    }
    int cancel_state = cap__nss_turn_take(CAP__NSS_HOSTENT);
    CAP__REAL(endhostent)();
    cap__nss_turn_give(CAP__NSS_HOSTENT, cancel_state);
}

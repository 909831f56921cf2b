/* SPDX-License-Identifier: MIT */
/*
 * The name-service lookups' turns (nss.c): glibc holds a lock of its own
 * across a module's call in every by-key lookup without _r and every
 * enumeration call, and a module that asks a daemon parks the user
 * thread there. A user thread takes the turn of that lock of glibc's
 * first, so only one user thread at a time can be parked holding it (a
 * second one in glibc's lock slept its worker in the kernel: a
 * deadlock), and makes the call with cancellation disabled (a cancel
 * acting in the module would leave glibc's lock held for good).
 */
#ifndef CAP_INTERCEPT_NSS_H
#define CAP_INTERCEPT_NSS_H

#include "intercept/intercept.h"

/* glibc's locks: one per by-key function without _r, one per
 * enumeration (set, get, get_r and end share it). */
enum cap__nss_lock {
    CAP__NSS_NO_LOCK,
    CAP__NSS_PWNAM, CAP__NSS_PWUID, CAP__NSS_GRNAM, CAP__NSS_GRGID, CAP__NSS_SPNAM,
    CAP__NSS_SERVBYNAME, CAP__NSS_SERVBYPORT,
    CAP__NSS_PWENT, CAP__NSS_GRENT, CAP__NSS_SPENT, CAP__NSS_SERVENT, CAP__NSS_NETGRENT,
    /* nss_uncached.c */
    CAP__NSS_PROTOBYNAME, CAP__NSS_PROTOBYNUMBER, CAP__NSS_PROTOENT,
    CAP__NSS_NETBYNAME, CAP__NSS_NETBYADDR, CAP__NSS_NETENT,
    CAP__NSS_RPCBYNAME, CAP__NSS_RPCBYNUMBER, CAP__NSS_RPCENT,
    CAP__NSS_ALIASBYNAME, CAP__NSS_ALIASENT,
    CAP__NSS_SGNAM, CAP__NSS_SGENT,
    CAP__NSS_HOSTENT,
    CAP__NSS_NLOCKS
};

/* On a user thread: disables cancellation and takes lock's turn, parking
 * while another user thread has it. Returns the cancel state to give
 * back. */
int cap__nss_turn_take(enum cap__nss_lock lock);
/* Gives the turn back and restores the cancel state. */
void cap__nss_turn_give(enum cap__nss_lock lock, int cancel_state);

/* A call made in lock's turn by whatever thread calls: the turn taken on
 * a user thread (cap__nss_turn_take), nothing taken on a thread the
 * library does not run or in a signal handler, where the call is glibc's
 * as it is. */
typedef struct cap__nss_turn {
    enum cap__nss_lock lock; /* CAP__NSS_NO_LOCK: no turn taken */
    int cancel_state;
} cap__nss_turn;

static inline cap__nss_turn cap__nss_turn_begin(enum cap__nss_lock lock)
{
    if (!cap__ic_user())
        return (cap__nss_turn){ CAP__NSS_NO_LOCK, 0 };
    return (cap__nss_turn){ lock, cap__nss_turn_take(lock) };
}

static inline void cap__nss_turn_end(cap__nss_turn t)
{
    if (t.lock != CAP__NSS_NO_LOCK)
        cap__nss_turn_give(t.lock, t.cancel_state);
}

#endif /* CAP_INTERCEPT_NSS_H */

/* SPDX-License-Identifier: MIT */
/*
 * User, group, shadow, service and netgroup lookups (getpwnam, getpwuid,
 * getgrnam, getgrgid, getspnam, getservbyname, getservbyport, their _r
 * forms, the set/get/end*ent enumerations, the netgroup calls,
 * getgrouplist and initgroups), for the waits glibc makes in them where
 * no wrapper sees.
 *
 * glibc asks the name-service modules nsswitch.conf names (files,
 * systemd, sss, ldap, nis, winbind), and a module that talks to a daemon
 * waits for its answer through calls this library wraps (poll, read): on
 * a user thread they park it. But the by-key forms without _r and every
 * enumeration call (setnetgrent and getnetgrent too) hold a lock of
 * glibc's own across the module's call, a kernel thread's lock: a second
 * user thread of the worker calling the same function slept the worker
 * in the kernel on it, and the parked holder could never run again
 * (tests/io/user_lookups_take_turns hung so on one worker). So user
 * threads take a turn (a user-level mutex, one per lock of glibc's)
 * before such a call: glibc's lock is then wanted by one user thread at
 * a time, and the others park on the turn. The call runs in place, at
 * glibc's speed, with cancellation disabled: a cancel acting in the
 * module would leave glibc's lock held for good. A thread the library
 * does not run calls glibc's directly; one that finds glibc's lock held
 * by a parked user thread waits for it in the kernel, as for any holder.
 *
 * glibc also asks nscd first, when its socket exists, through its
 * internal calls, which held the worker for nscd's answer. So while
 * nscd's socket is there (looked at once a second at most) every form
 * runs whole on a kernel thread of the offload pool instead, as the
 * resolver's calls do (resolve.c), errno coming back with the result:
 * 14-19 us a lookup in a small /etc/passwd here, against glibc's 2-4 us.
 *
 * The databases nscd does not serve (protocols, networks, rpc, aliases,
 * gshadow, the hosts enumeration) take the same turns in nss_uncached.c.
 */
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <shadow.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include <capriccio.h>

#include "intercept/intercept.h"
#include "intercept/nss.h"
#include "io/io.h"
#include "util/compiler.h"

enum op {
    PWNAM, PWUID, PWNAM_R, PWUID_R, SETPWENT, PWENT, PWENT_R, ENDPWENT,
    GRNAM, GRGID, GRNAM_R, GRGID_R, SETGRENT, GRENT, GRENT_R, ENDGRENT,
    SPNAM, SPNAM_R, SETSPENT, SPENT, SPENT_R, ENDSPENT,
    GROUPLIST, INITGROUPS,
    SERVBYNAME, SERVBYPORT, SERVBYNAME_R, SERVBYPORT_R, SETSERVENT, SERVENT, SERVENT_R,
    ENDSERVENT,
    SETNETGRENT, NETGRENT, NETGRENT_R, ENDNETGRENT, INNETGR,
};

struct call {
    enum op op;
    const char *name; /* a user, group, service or netgroup */
    const char *proto; /* a service's */
    unsigned id;    /* a uid, gid or port */
    int stayopen;   /* setservent's */
    char **member[3]; /* getnetgrent's host, user and domain */
    const char *host, *user, *domain; /* innetgr's */
    void *entry;    /* the _r forms' struct passwd, group or spwd */
    char *buf;
    size_t buflen;
    void *result;   /* the _r forms' struct ... ** */
    gid_t *groups;  /* getgrouplist's */
    int *ngroups;
    void *ret;      /* the entry of the forms without _r */
    int rc;         /* the _r forms', getgrouplist's, initgroups' */
    int err;
};

/* Out of line: called after the turn's park, it must ask for errno's
 * address itself. */
CAP__OPAQUE_CALL static void run(void *arg)
{
    struct call *c = arg;
    errno = c->err; /* a call that succeeds leaves the caller's */
    switch (c->op) {
    case PWNAM:
        c->ret = CAP__REAL(getpwnam)(c->name);
        break;
    case PWUID:
        c->ret = CAP__REAL(getpwuid)(c->id);
        break;
    case PWNAM_R:
        c->rc = CAP__REAL(getpwnam_r)(c->name, c->entry, c->buf, c->buflen, c->result);
        break;
    case PWUID_R:
        c->rc = CAP__REAL(getpwuid_r)(c->id, c->entry, c->buf, c->buflen, c->result);
        break;
    case SETPWENT:
        CAP__REAL(setpwent)();
        break;
    case PWENT:
        c->ret = CAP__REAL(getpwent)();
        break;
    case PWENT_R:
        c->rc = CAP__REAL(getpwent_r)(c->entry, c->buf, c->buflen, c->result);
        break;
    case ENDPWENT:
        CAP__REAL(endpwent)();
        break;
    case GRNAM:
        c->ret = CAP__REAL(getgrnam)(c->name);
        break;
    case GRGID:
        c->ret = CAP__REAL(getgrgid)(c->id);
        break;
    case GRNAM_R:
        c->rc = CAP__REAL(getgrnam_r)(c->name, c->entry, c->buf, c->buflen, c->result);
        break;
    case GRGID_R:
        c->rc = CAP__REAL(getgrgid_r)(c->id, c->entry, c->buf, c->buflen, c->result);
        break;
    case SETGRENT:
        CAP__REAL(setgrent)();
        break;
    case GRENT:
        c->ret = CAP__REAL(getgrent)();
        break;
    case GRENT_R:
        c->rc = CAP__REAL(getgrent_r)(c->entry, c->buf, c->buflen, c->result);
        break;
    case ENDGRENT:
        CAP__REAL(endgrent)();
        break;
    case SPNAM:
        c->ret = CAP__REAL(getspnam)(c->name);
        break;
    case SPNAM_R:
        c->rc = CAP__REAL(getspnam_r)(c->name, c->entry, c->buf, c->buflen, c->result);
        break;
    case SETSPENT:
        CAP__REAL(setspent)();
        break;
    case SPENT:
        c->ret = CAP__REAL(getspent)();
        break;
    case SPENT_R:
        c->rc = CAP__REAL(getspent_r)(c->entry, c->buf, c->buflen, c->result);
        break;
    case ENDSPENT:
        CAP__REAL(endspent)();
        break;
    case GROUPLIST:
        c->rc = CAP__REAL(getgrouplist)(c->name, c->id, c->groups, c->ngroups);
        break;
    case INITGROUPS:
        c->rc = CAP__REAL(initgroups)(c->name, c->id);
        break;
    case SERVBYNAME:
        c->ret = CAP__REAL(getservbyname)(c->name, c->proto);
        break;
    case SERVBYPORT:
        c->ret = CAP__REAL(getservbyport)((int)c->id, c->proto);
        break;
    case SERVBYNAME_R:
        c->rc = CAP__REAL(getservbyname_r)(c->name, c->proto, c->entry, c->buf, c->buflen,
                                           c->result);
        break;
    case SERVBYPORT_R:
        c->rc = CAP__REAL(getservbyport_r)((int)c->id, c->proto, c->entry, c->buf, c->buflen,
                                           c->result);
        break;
    case SETSERVENT:
        CAP__REAL(setservent)(c->stayopen);
        break;
    case SERVENT:
        c->ret = CAP__REAL(getservent)();
        break;
    case SERVENT_R:
        c->rc = CAP__REAL(getservent_r)(c->entry, c->buf, c->buflen, c->result);
        break;
    case ENDSERVENT:
        CAP__REAL(endservent)();
        break;
    case SETNETGRENT:
        c->rc = CAP__REAL(setnetgrent)(c->name);
        break;
    case NETGRENT:
        c->rc = CAP__REAL(getnetgrent)(c->member[0], c->member[1], c->member[2]);
        break;
    case NETGRENT_R:
        c->rc = CAP__REAL(getnetgrent_r)(c->member[0], c->member[1], c->member[2], c->buf,
                                         c->buflen);
        break;
    case ENDNETGRENT:
        CAP__REAL(endnetgrent)();
        break;
    case INNETGR:
        c->rc = CAP__REAL(innetgr)(c->name, c->host, c->user, c->domain);
        break;
    }
    c->err = errno;
}

/* The caller's errno into c, out of line: its location is declared
 * const, and an address kept from before the park would be the errno of
 * the worker the thread ran on then. */
CAP__OPAQUE_CALL static void save_errno(struct call *c)
{
    c->err = errno;
}

/* glibc's nscd socket (_PATH_NSCDSOCKET, nscd-client.h). */
#define NSCD_SOCKET "/var/run/nscd/socket"

/* Whether glibc may ask nscd first: its socket exists. Looked at once a
 * second at most (the coarse clock costs no system call); a race only
 * looks twice. */
static bool nscd_may_answer(void)
{
    static atomic_long looked_at = -1;
    static atomic_bool there;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    if (atomic_load_explicit(&looked_at, memory_order_acquire) != now.tv_sec) {
        atomic_store_explicit(&there, access(NSCD_SOCKET, F_OK) == 0, memory_order_relaxed);
        atomic_store_explicit(&looked_at, now.tv_sec, memory_order_release);
    }
    return atomic_load_explicit(&there, memory_order_relaxed);
}

/* The lock of glibc's that op holds across the module's call. */
static enum cap__nss_lock glibc_lock_of(enum op op)
{
    switch (op) {
    case PWNAM:
        return CAP__NSS_PWNAM;
    case PWUID:
        return CAP__NSS_PWUID;
    case GRNAM:
        return CAP__NSS_GRNAM;
    case GRGID:
        return CAP__NSS_GRGID;
    case SPNAM:
        return CAP__NSS_SPNAM;
    case SERVBYNAME:
        return CAP__NSS_SERVBYNAME;
    case SERVBYPORT:
        return CAP__NSS_SERVBYPORT;
    case SETPWENT: case PWENT: case PWENT_R: case ENDPWENT:
        return CAP__NSS_PWENT;
    case SETGRENT: case GRENT: case GRENT_R: case ENDGRENT:
        return CAP__NSS_GRENT;
    case SETSPENT: case SPENT: case SPENT_R: case ENDSPENT:
        return CAP__NSS_SPENT;
    case SETSERVENT: case SERVENT: case SERVENT_R: case ENDSERVENT:
        return CAP__NSS_SERVENT;
    case SETNETGRENT: case NETGRENT: case NETGRENT_R: case ENDNETGRENT:
        return CAP__NSS_NETGRENT;
    default:
        return CAP__NSS_NO_LOCK;
    }
}

/* One turn per lock of glibc's, taken by user threads before it: only
 * the turn's holder, the one user thread inside, may park holding
 * glibc's lock. [CAP__NSS_NO_LOCK] is unused. */
static cap_mutex_t turns[CAP__NSS_NLOCKS] = { [0 ... CAP__NSS_NLOCKS - 1] = CAP_MUTEX_INITIALIZER };

/* nss.h */
int cap__nss_turn_take(enum cap__nss_lock lock)
{
    int cancel_state;
    cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &cancel_state);
    cap_mutex_lock(&turns[lock]);
    return cancel_state;
}

/* nss.h */
void cap__nss_turn_give(enum cap__nss_lock lock, int cancel_state)
{
    cap_mutex_unlock(&turns[lock]);
    cap_thread_setcancelstate(cancel_state, NULL);
}

/* Runs c. From a thread the library does not run, or a signal handler: in
 * place. From a user thread: on the pool while nscd may answer (inline if
 * the pool cannot take it); else in place, a form that holds a lock of
 * glibc's inside that lock's turn and with cancellation disabled, so no
 * cancel acting in the module leaves glibc's lock held for good (a
 * pending one acts at the next cancellation point). */
static void go(struct call *c)
{
    save_errno(c);
    if (!cap__ic_user()) {
        run(c);
        return;
    }
    if (nscd_may_answer()) {
        if (cap__offload(run, c) != 0)
            run(c);
        cap__sig_take_jump(); /* a handler's jump into this thread, if any */
        errno = c->err;
        return;
    }
    enum cap__nss_lock lock = glibc_lock_of(c->op);
    if (lock == CAP__NSS_NO_LOCK) {
        run(c);
        return;
    }
    int cancel_state = cap__nss_turn_take(lock);
    run(c);
    cap__nss_turn_give(lock, cancel_state);
    cap__ic_set_errno(c->err); /* after a park: asks for errno's address again */
}

/* ---- passwd ---------------------------------------------------------------- */

struct passwd *getpwnam(const char *name)
{
    struct call c = { .op = PWNAM, .name = name };
    go(&c);
    return c.ret;
}

struct passwd *getpwuid(uid_t uid)
{
    struct call c = { .op = PWUID, .id = uid };
    go(&c);
    return c.ret;
}

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t buflen,
               struct passwd **result)
{
    struct call c = { .op = PWNAM_R, .name = name, .entry = pw, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen, struct passwd **result)
{
    struct call c = { .op = PWUID_R, .id = uid, .entry = pw, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void setpwent(void)
{
    struct call c = { .op = SETPWENT };
    go(&c);
}

struct passwd *getpwent(void)
{
    struct call c = { .op = PWENT };
    go(&c);
    return c.ret;
}

int getpwent_r(struct passwd *pw, char *buf, size_t buflen, struct passwd **result)
{
    struct call c = { .op = PWENT_R, .entry = pw, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void endpwent(void)
{
    struct call c = { .op = ENDPWENT };
    go(&c);
}

/* ---- group ----------------------------------------------------------------- */

struct group *getgrnam(const char *name)
{
    struct call c = { .op = GRNAM, .name = name };
    go(&c);
    return c.ret;
}

struct group *getgrgid(gid_t gid)
{
    struct call c = { .op = GRGID, .id = gid };
    go(&c);
    return c.ret;
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t buflen,
               struct group **result)
{
    struct call c = { .op = GRNAM_R, .name = name, .entry = gr, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t buflen, struct group **result)
{
    struct call c = { .op = GRGID_R, .id = gid, .entry = gr, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void setgrent(void)
{
    struct call c = { .op = SETGRENT };
    go(&c);
}

struct group *getgrent(void)
{
    struct call c = { .op = GRENT };
    go(&c);
    return c.ret;
}

int getgrent_r(struct group *gr, char *buf, size_t buflen, struct group **result)
{
    struct call c = { .op = GRENT_R, .entry = gr, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void endgrent(void)
{
    struct call c = { .op = ENDGRENT };
    go(&c);
}

int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
    struct call c = { .op = GROUPLIST, .name = user, .id = group, .groups = groups,
                      .ngroups = ngroups };
    go(&c);
    return c.rc;
}

int initgroups(const char *user, gid_t group)
{
    struct call c = { .op = INITGROUPS, .name = user, .id = group };
    go(&c);
    return c.rc;
}

/* ---- shadow ---------------------------------------------------------------- */

struct spwd *getspnam(const char *name)
{
    struct call c = { .op = SPNAM, .name = name };
    go(&c);
    return c.ret;
}

int getspnam_r(const char *name, struct spwd *sp, char *buf, size_t buflen,
               struct spwd **result)
{
    struct call c = { .op = SPNAM_R, .name = name, .entry = sp, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void setspent(void)
{
    struct call c = { .op = SETSPENT };
    go(&c);
}

struct spwd *getspent(void)
{
    struct call c = { .op = SPENT };
    go(&c);
    return c.ret;
}

int getspent_r(struct spwd *sp, char *buf, size_t buflen, struct spwd **result)
{
    struct call c = { .op = SPENT_R, .entry = sp, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void endspent(void)
{
    struct call c = { .op = ENDSPENT };
    go(&c);
}

/* ---- services -------------------------------------------------------------- */

struct servent *getservbyname(const char *name, const char *proto)
{
    struct call c = { .op = SERVBYNAME, .name = name, .proto = proto };
    go(&c);
    return c.ret;
}

struct servent *getservbyport(int port, const char *proto)
{
    struct call c = { .op = SERVBYPORT, .id = (unsigned)port, .proto = proto };
    go(&c);
    return c.ret;
}

int getservbyname_r(const char *name, const char *proto, struct servent *se, char *buf,
                    size_t buflen, struct servent **result)
{
    struct call c = { .op = SERVBYNAME_R, .name = name, .proto = proto, .entry = se, .buf = buf,
                      .buflen = buflen, .result = result };
    go(&c);
    return c.rc;
}

int getservbyport_r(int port, const char *proto, struct servent *se, char *buf, size_t buflen,
                    struct servent **result)
{
    struct call c = { .op = SERVBYPORT_R, .id = (unsigned)port, .proto = proto, .entry = se,
                      .buf = buf, .buflen = buflen, .result = result };
    go(&c);
    return c.rc;
}

void setservent(int stayopen)
{
    struct call c = { .op = SETSERVENT, .stayopen = stayopen };
    go(&c);
}

struct servent *getservent(void)
{
    struct call c = { .op = SERVENT };
    go(&c);
    return c.ret;
}

int getservent_r(struct servent *se, char *buf, size_t buflen, struct servent **result)
{
    struct call c = { .op = SERVENT_R, .entry = se, .buf = buf, .buflen = buflen,
                      .result = result };
    go(&c);
    return c.rc;
}

void endservent(void)
{
    struct call c = { .op = ENDSERVENT };
    go(&c);
}

/* ---- netgroups ------------------------------------------------------------- */

int setnetgrent(const char *netgroup)
{
    struct call c = { .op = SETNETGRENT, .name = netgroup };
    go(&c);
    return c.rc;
}

int getnetgrent(char **host, char **user, char **domain)
{
    struct call c = { .op = NETGRENT, .member = { host, user, domain } };
    go(&c);
    return c.rc;
}

int getnetgrent_r(char **host, char **user, char **domain, char *buf, size_t buflen)
{
    struct call c = { .op = NETGRENT_R, .member = { host, user, domain }, .buf = buf,
                      .buflen = buflen };
    go(&c);
    return c.rc;
}

void endnetgrent(void)
{
    struct call c = { .op = ENDNETGRENT };
    go(&c);
}

int innetgr(const char *netgroup, const char *host, const char *user, const char *domain)
{
    struct call c = { .op = INNETGR, .name = netgroup, .host = host, .user = user,
                      .domain = domain };
    go(&c);
    return c.rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * A name-service module for tests/io/user_lookups_take_turns.c, loaded by
 * glibc as "captest" (the test links it, so glibc's dlopen of
 * libnss_captest.so.2 finds it by its soname, and names it in
 * __nss_configure_lookup). Its passwd, group and shadow lookups each
 * wait in read() for one byte on the pipe the test hands it, as a module
 * that asks a daemon (sssd, systemd-userdbd, an LDAP server) waits for
 * the answer: 'y' finds the entry, anything else does not. Entries:
 * by name, uid/gid 5000 + the name's first byte; by id, "u<uid>" or
 * "g<gid>"; a service by name, port 5000 + the first byte, by port
 * "p<port>", protocol as asked ("tcp" when not); the n-th entry of an enumeration, "e<n>" with id 7000 + n;
 * every user is also in group 6100 (initgroups_dyn). It records the
 * kernel thread each lookup ran on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include <errno.h>
#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <nss.h>
#include <pwd.h>
#include <shadow.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int answer_fd = -1;
static int next_entry;
static _Atomic pid_t last_tid; /* the kernel thread of the latest lookup */

void captest_nss_answer_from(int fd)
{
    answer_fd = fd;
}

pid_t captest_nss_last_tid(void)
{
    return last_tid;
}

static enum nss_status wait_answer(int *errnop)
{
    last_tid = gettid();
    char c;
    if (answer_fd < 0 || read(answer_fd, &c, 1) != 1) {
        *errnop = EIO;
        return NSS_STATUS_UNAVAIL;
    }
    return c == 'y' ? NSS_STATUS_SUCCESS : NSS_STATUS_NOTFOUND;
}

/* name into buf; NULL when it does not fit. */
static char *keep(const char *name, char *buf, size_t buflen)
{
    size_t n = strlen(name) + 1;
    if (n > buflen)
        return NULL;
    return memcpy(buf, name, n);
}

static enum nss_status fill_passwd(const char *name, uid_t uid, struct passwd *pw, char *buf,
                                   size_t buflen, int *errnop)
{
    char *kept = keep(name, buf, buflen);
    if (kept == NULL) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    *pw = (struct passwd){ .pw_name = kept, .pw_passwd = (char *)"x", .pw_uid = uid,
                           .pw_gid = 5000, .pw_gecos = (char *)"", .pw_dir = (char *)"/",
                           .pw_shell = (char *)"/bin/sh" };
    return NSS_STATUS_SUCCESS;
}

static enum nss_status fill_group(const char *name, gid_t gid, struct group *gr, char *buf,
                                  size_t buflen, int *errnop)
{
    /* The member list (one pointer and NULL), aligned, then the name. */
    size_t lead = (sizeof(char *) - (uintptr_t)buf % sizeof(char *)) % sizeof(char *);
    if (buflen < lead + 2 * sizeof(char *)) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    char **members = (char **)(buf + lead);
    char *kept = keep(name, (char *)(members + 2), buflen - lead - 2 * sizeof(char *));
    if (kept == NULL) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    members[0] = kept;
    members[1] = NULL;
    *gr = (struct group){ .gr_name = kept, .gr_passwd = (char *)"x", .gr_gid = gid,
                          .gr_mem = members };
    return NSS_STATUS_SUCCESS;
}

static enum nss_status fill_shadow(const char *name, struct spwd *sp, char *buf, size_t buflen,
                                   int *errnop)
{
    char *kept = keep(name, buf, buflen);
    if (kept == NULL) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    *sp = (struct spwd){ .sp_namp = kept, .sp_pwdp = (char *)"!", .sp_lstchg = -1, .sp_min = -1,
                         .sp_max = -1, .sp_warn = -1, .sp_inact = -1, .sp_expire = -1,
                         .sp_flag = (unsigned long)-1 };
    return NSS_STATUS_SUCCESS;
}

static enum nss_status fill_service(const char *name, int port, const char *proto,
                                    struct servent *se, char *buf, size_t buflen, int *errnop)
{
    /* The alias list (NULL), aligned, then the name and the protocol. */
    size_t lead = (sizeof(char *) - (uintptr_t)buf % sizeof(char *)) % sizeof(char *);
    size_t nl = strlen(name) + 1, pl = strlen(proto) + 1;
    if (buflen < lead + sizeof(char *) + nl + pl) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    char **aliases = (char **)(buf + lead);
    aliases[0] = NULL;
    char *kept = memcpy((char *)(aliases + 1), name, nl);
    *se = (struct servent){ .s_name = kept, .s_aliases = aliases, .s_port = port,
                            .s_proto = memcpy(kept + nl, proto, pl) };
    return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_captest_getpwnam_r(const char *name, struct passwd *pw, char *buf,
                                        size_t buflen, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return fill_passwd(name, 5000 + (unsigned char)name[0], pw, buf, buflen, errnop);
}

enum nss_status _nss_captest_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen,
                                        int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    char name[32];
    snprintf(name, sizeof name, "u%u", (unsigned)uid);
    return fill_passwd(name, uid, pw, buf, buflen, errnop);
}

enum nss_status _nss_captest_getgrnam_r(const char *name, struct group *gr, char *buf,
                                        size_t buflen, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return fill_group(name, 5000 + (unsigned char)name[0], gr, buf, buflen, errnop);
}

enum nss_status _nss_captest_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t buflen,
                                        int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    char name[32];
    snprintf(name, sizeof name, "g%u", (unsigned)gid);
    return fill_group(name, gid, gr, buf, buflen, errnop);
}

enum nss_status _nss_captest_getspnam_r(const char *name, struct spwd *sp, char *buf,
                                        size_t buflen, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return fill_shadow(name, sp, buf, buflen, errnop);
}

enum nss_status _nss_captest_getservbyname_r(const char *name, const char *proto,
                                            struct servent *se, char *buf, size_t buflen,
                                            int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return fill_service(name, htons(5000 + (unsigned char)name[0]), proto ? proto : "tcp", se, buf,
                        buflen, errnop);
}

enum nss_status _nss_captest_getservbyport_r(int port, const char *proto, struct servent *se,
                                            char *buf, size_t buflen, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    char name[32];
    snprintf(name, sizeof name, "p%d", ntohs(port));
    return fill_service(name, port, proto ? proto : "tcp", se, buf, buflen, errnop);
}

/* A protocol by name: number 50 + the name's first byte, no aliases. */
enum nss_status _nss_captest_getprotobyname_r(const char *name, struct protoent *pe, char *buf,
                                             size_t buflen, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    size_t lead = (sizeof(char *) - (uintptr_t)buf % sizeof(char *)) % sizeof(char *);
    if (buflen < lead + sizeof(char *)) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    char **aliases = (char **)(buf + lead);
    aliases[0] = NULL;
    char *kept = keep(name, (char *)(aliases + 1), buflen - lead - sizeof(char *));
    if (kept == NULL) {
        *errnop = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    *pe = (struct protoent){ .p_name = kept, .p_aliases = aliases,
                             .p_proto = 50 + (unsigned char)name[0] };
    return NSS_STATUS_SUCCESS;
}

/* Enumerations: one counter for all four, reset by each set*ent. A
 * call that does not fit its buffer keeps its entry for the retry. */
static enum nss_status start_enumeration(void)
{
    next_entry = 0;
    return NSS_STATUS_SUCCESS;
}

static enum nss_status end_enumeration(void)
{
    return NSS_STATUS_SUCCESS;
}

/* The next entry's name, once the answer is yes. */
static enum nss_status enumerated(char *name, size_t size, int *errnop)
{
    enum nss_status s = wait_answer(errnop);
    if (s == NSS_STATUS_SUCCESS)
        snprintf(name, size, "e%d", next_entry);
    return s;
}

/* s, the fill's: the next call gives the next entry if this one fit. */
static enum nss_status advanced(enum nss_status s)
{
    if (s == NSS_STATUS_SUCCESS)
        next_entry++;
    return s;
}

enum nss_status _nss_captest_setpwent(int stayopen)
{
    (void)stayopen;
    return start_enumeration();
}

enum nss_status _nss_captest_endpwent(void)
{
    return end_enumeration();
}

enum nss_status _nss_captest_getpwent_r(struct passwd *pw, char *buf, size_t buflen, int *errnop)
{
    char name[32];
    enum nss_status s = enumerated(name, sizeof name, errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return advanced(fill_passwd(name, 7000 + next_entry, pw, buf, buflen, errnop));
}

enum nss_status _nss_captest_setgrent(int stayopen)
{
    (void)stayopen;
    return start_enumeration();
}

enum nss_status _nss_captest_endgrent(void)
{
    return end_enumeration();
}

enum nss_status _nss_captest_getgrent_r(struct group *gr, char *buf, size_t buflen, int *errnop)
{
    char name[32];
    enum nss_status s = enumerated(name, sizeof name, errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return advanced(fill_group(name, 7000 + next_entry, gr, buf, buflen, errnop));
}

enum nss_status _nss_captest_setspent(int stayopen)
{
    (void)stayopen;
    return start_enumeration();
}

enum nss_status _nss_captest_endspent(void)
{
    return end_enumeration();
}

enum nss_status _nss_captest_getspent_r(struct spwd *sp, char *buf, size_t buflen, int *errnop)
{
    char name[32];
    enum nss_status s = enumerated(name, sizeof name, errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return advanced(fill_shadow(name, sp, buf, buflen, errnop));
}

enum nss_status _nss_captest_setservent(int stayopen)
{
    (void)stayopen;
    return start_enumeration();
}

enum nss_status _nss_captest_endservent(void)
{
    return end_enumeration();
}

enum nss_status _nss_captest_getservent_r(struct servent *se, char *buf, size_t buflen,
                                         int *errnop)
{
    char name[32];
    enum nss_status s = enumerated(name, sizeof name, errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    return advanced(fill_service(name, htons(7000 + next_entry), "tcp", se, buf, buflen, errnop));
}

/* The groups of user beside `group`: 6100. */
enum nss_status _nss_captest_initgroups_dyn(const char *user, gid_t group, long *start,
                                            long *size, gid_t **groups, long limit, int *errnop)
{
    (void)user;
    (void)group;
    enum nss_status s = wait_answer(errnop);
    if (s != NSS_STATUS_SUCCESS)
        return s;
    if (limit > 0 && *start >= limit)
        return NSS_STATUS_SUCCESS;
    if (*start == *size) {
        gid_t *more = realloc(*groups, 2 * (size_t)*size * sizeof **groups);
        if (more == NULL) {
            *errnop = ENOMEM;
            return NSS_STATUS_TRYAGAIN;
        }
        *groups = more;
        *size *= 2;
    }
    (*groups)[(*start)++] = 6100;
    return NSS_STATUS_SUCCESS;
}

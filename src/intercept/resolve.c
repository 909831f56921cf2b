/* SPDX-License-Identifier: MIT */
/*
 * Name resolution: getaddrinfo, getnameinfo, gethostbyname(_r),
 * gethostbyname2(_r), gethostbyaddr(_r). glibc's resolver talks to DNS
 * and reads files through its own internal calls, which no interposition
 * sees, so the whole call runs on a kernel thread of the offload pool
 * while only the calling user thread waits. errno and h_errno of the
 * pool thread are carried back to the caller.
 */
#include <errno.h>
#include <netdb.h>

#include "intercept/intercept.h"
#include "io/io.h"
#include "util/compiler.h"

struct call {
    int kind;
    const void *a, *b;
    const void *c;
    void *d;
    void *buf;
    size_t buflen;
    void *result_p;
    int *errp;
    int af;
    socklen_t len1, len2;
    char *host, *serv;
    int flags;
    long ret;
    void *retp;
    int err, herr;
};

enum { GAI, GNI, GHBN, GHBN2, GHBA, GHBN_R, GHBN2_R, GHBA_R };

static void run(void *arg)
{
    struct call *c = arg;
    /* The caller's errno and h_errno, which a call that succeeds leaves
     * as they were: a pool thread's own (0 when it is new) came back. */
    errno = c->err;
    h_errno = c->herr;
    switch (c->kind) {
    case GAI:
        c->ret = CAP__REAL(getaddrinfo)(c->a, c->b, c->c, c->d);
        break;
    case GNI:
        c->ret = CAP__REAL(getnameinfo)(c->a, c->len1, c->host, c->len2, c->serv,
                                        (socklen_t)c->buflen, c->flags);
        break;
    case GHBN:
        c->retp = CAP__REAL(gethostbyname)(c->a);
        break;
    case GHBN2:
        c->retp = CAP__REAL(gethostbyname2)(c->a, c->af);
        break;
    case GHBA:
        c->retp = CAP__REAL(gethostbyaddr)(c->a, c->len1, c->af);
        break;
    case GHBN_R:
        c->ret = CAP__REAL(gethostbyname_r)(c->a, c->d, c->buf, c->buflen, c->result_p, c->errp);
        break;
    case GHBN2_R:
        c->ret = CAP__REAL(gethostbyname2_r)(c->a, c->af, c->d, c->buf, c->buflen, c->result_p,
                                             c->errp);
        break;
    case GHBA_R:
        c->ret = CAP__REAL(gethostbyaddr_r)(c->a, c->len1, c->af, c->d, c->buf, c->buflen,
                                            c->result_p, c->errp);
        break;
    }
    c->err = errno;
    c->herr = h_errno;
}

/* The caller's errno and h_errno into c, out of line: both locations are
 * declared const, and an address kept from before the park would be the
 * errno of the worker the thread ran on then. */
CAP__OPAQUE_CALL static void save_errnos(struct call *c)
{
    c->err = errno;
    c->herr = h_errno;
}

/* Runs c on the pool (inline if the pool cannot take it). */
static void go(struct call *c)
{
    save_errnos(c);
    if (cap__offload(run, c) != 0)
        run(c);
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    errno = c->err;
    h_errno = c->herr;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    if (!cap__ic_user())
        return CAP__REAL(getaddrinfo)(node, service, hints, res);
    struct call c = { .kind = GAI, .a = node, .b = service, .c = hints, .d = res };
    go(&c);
    return (int)c.ret;
}

int getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host, socklen_t hostlen,
                char *serv, socklen_t servlen, int flags)
{
    if (!cap__ic_user())
        return CAP__REAL(getnameinfo)(sa, salen, host, hostlen, serv, servlen, flags);
    struct call c = { .kind = GNI, .a = sa, .len1 = salen, .host = host, .len2 = hostlen,
                      .serv = serv, .buflen = servlen, .flags = flags };
    go(&c);
    return (int)c.ret;
}

struct hostent *gethostbyname(const char *name)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyname)(name);
    struct call c = { .kind = GHBN, .a = name };
    go(&c);
    return c.retp;
}

struct hostent *gethostbyname2(const char *name, int af)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyname2)(name, af);
    struct call c = { .kind = GHBN2, .a = name, .af = af };
    go(&c);
    return c.retp;
}

struct hostent *gethostbyaddr(const void *addr, socklen_t len, int type)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyaddr)(addr, len, type);
    struct call c = { .kind = GHBA, .a = addr, .len1 = len, .af = type };
    go(&c);
    return c.retp;
}

int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t buflen,
                    struct hostent **result, int *h_errnop)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyname_r)(name, ret, buf, buflen, result, h_errnop);
    struct call c = { .kind = GHBN_R, .a = name, .d = ret, .buf = buf, .buflen = buflen,
                      .result_p = result, .errp = h_errnop };
    go(&c);
    return (int)c.ret;
}

int gethostbyname2_r(const char *name, int af, struct hostent *ret, char *buf, size_t buflen,
                     struct hostent **result, int *h_errnop)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyname2_r)(name, af, ret, buf, buflen, result, h_errnop);
    struct call c = { .kind = GHBN2_R, .a = name, .af = af, .d = ret, .buf = buf,
                      .buflen = buflen, .result_p = result, .errp = h_errnop };
    go(&c);
    return (int)c.ret;
}

int gethostbyaddr_r(const void *addr, socklen_t len, int type, struct hostent *ret, char *buf,
                    size_t buflen, struct hostent **result, int *h_errnop)
{
    if (!cap__ic_user())
        return CAP__REAL(gethostbyaddr_r)(addr, len, type, ret, buf, buflen, result, h_errnop);
    struct call c = { .kind = GHBA_R, .a = addr, .len1 = len, .af = type, .d = ret, .buf = buf,
                      .buflen = buflen, .result_p = result, .errp = h_errnop };
    go(&c);
    return (int)c.ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * The resolver's DNS query family (resolv.h): res_query, res_search,
 * res_querydomain, res_send and their res_n* forms that take a state.
 * Like getaddrinfo (resolve.c) they talk to the name server through
 * glibc's own internal calls, which no interposition sees, and wait up
 * to RES_TIMEOUT seconds per try; so the whole call runs on a kernel
 * thread of the offload pool while only the calling user thread waits.
 * errno and h_errno of the pool thread are carried back.
 *
 * The forms without a state use the implicit `_res`, which glibc keeps
 * per kernel thread: on the pool they use the pool thread's, read from
 * /etc/resolv.conf like any fresh thread's, not the calling worker's (a
 * program that edits `_res` on a user thread edits its worker's, shared
 * by every user thread there: use the res_n* forms with a state of your
 * own, which go to the pool as given). The __res_* names, which programs
 * built against glibc before 2.34 call (libresolv's then, compatibility
 * symbols of libc's now), are the same functions here.
 */
#include <netdb.h>
#include <resolv.h>

#include "intercept/intercept.h"
#include "io/io.h"

enum kind { DO_QUERY, DO_SEARCH, DO_QUERYDOMAIN, DO_SEND };

struct call {
    enum kind kind;
    res_state state; /* NULL: the implicit form */
    const char *name, *domain;
    int class, type;
    const unsigned char *msg;
    int msglen;
    unsigned char *answer;
    int anslen;
    int ret, err, herr;
};

static int run_implicit(struct call *c)
{
    switch (c->kind) {
    case DO_QUERY:
        return CAP__REAL(res_query)(c->name, c->class, c->type, c->answer, c->anslen);
    case DO_SEARCH:
        return CAP__REAL(res_search)(c->name, c->class, c->type, c->answer, c->anslen);
    case DO_QUERYDOMAIN:
        return CAP__REAL(res_querydomain)(c->name, c->domain, c->class, c->type, c->answer,
                                          c->anslen);
    case DO_SEND:
        return CAP__REAL(res_send)(c->msg, c->msglen, c->answer, c->anslen);
    }
    return -1;
}

static int run_state(struct call *c)
{
    res_state s = c->state;
    switch (c->kind) {
    case DO_QUERY:
        return CAP__REAL(res_nquery)(s, c->name, c->class, c->type, c->answer, c->anslen);
    case DO_SEARCH:
        return CAP__REAL(res_nsearch)(s, c->name, c->class, c->type, c->answer, c->anslen);
    case DO_QUERYDOMAIN:
        return CAP__REAL(res_nquerydomain)(s, c->name, c->domain, c->class, c->type, c->answer,
                                           c->anslen);
    case DO_SEND:
        return CAP__REAL(res_nsend)(s, c->msg, c->msglen, c->answer, c->anslen);
    }
    return -1;
}

static void run(void *arg)
{
    struct call *c = arg;
    c->ret = c->state == NULL ? run_implicit(c) : run_state(c);
    c->err = errno;
    c->herr = h_errno;
}

/* Runs c on the pool (inline if the pool cannot take it). */
static int go(struct call *c)
{
    if (cap__offload(run, c) != 0)
        run(c);
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    errno = c->err;
    h_errno = c->herr;
    return c->ret;
}

int res_query(const char *name, int class, int type, unsigned char *answer, int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_query)(name, class, type, answer, anslen);
    struct call c = { .kind = DO_QUERY, .name = name, .class = class, .type = type,
                      .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_search(const char *name, int class, int type, unsigned char *answer, int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_search)(name, class, type, answer, anslen);
    struct call c = { .kind = DO_SEARCH, .name = name, .class = class, .type = type,
                      .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_querydomain(const char *name, const char *domain, int class, int type,
                    unsigned char *answer, int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_querydomain)(name, domain, class, type, answer, anslen);
    struct call c = { .kind = DO_QUERYDOMAIN, .name = name, .domain = domain, .class = class,
                      .type = type, .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_send(const unsigned char *msg, int msglen, unsigned char *answer, int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_send)(msg, msglen, answer, anslen);
    struct call c = { .kind = DO_SEND, .msg = msg, .msglen = msglen, .answer = answer,
                      .anslen = anslen };
    return go(&c);
}

int res_nquery(res_state state, const char *name, int class, int type, unsigned char *answer,
               int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_nquery)(state, name, class, type, answer, anslen);
    struct call c = { .kind = DO_QUERY, .state = state, .name = name, .class = class,
                      .type = type, .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_nsearch(res_state state, const char *name, int class, int type, unsigned char *answer,
                int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_nsearch)(state, name, class, type, answer, anslen);
    struct call c = { .kind = DO_SEARCH, .state = state, .name = name, .class = class,
                      .type = type, .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_nquerydomain(res_state state, const char *name, const char *domain, int class, int type,
                     unsigned char *answer, int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_nquerydomain)(state, name, domain, class, type, answer, anslen);
    struct call c = { .kind = DO_QUERYDOMAIN, .state = state, .name = name, .domain = domain,
                      .class = class, .type = type, .answer = answer, .anslen = anslen };
    return go(&c);
}

int res_nsend(res_state state, const unsigned char *msg, int msglen, unsigned char *answer,
              int anslen)
{
    if (!cap__ic_user())
        return CAP__REAL(res_nsend)(state, msg, msglen, answer, anslen);
    struct call c = { .kind = DO_SEND, .state = state, .msg = msg, .msglen = msglen,
                      .answer = answer, .anslen = anslen };
    return go(&c);
}

/* The names of programs built before glibc 2.34 (see the top). */
int __res_query(const char *name, int class, int type, unsigned char *answer, int anslen) __THROW
    __attribute__((alias("res_query")));
int __res_search(const char *name, int class, int type, unsigned char *answer, int anslen) __THROW
    __attribute__((alias("res_search")));
int __res_querydomain(const char *name, const char *domain, int class, int type,
                      unsigned char *answer, int anslen) __THROW
    __attribute__((alias("res_querydomain")));
int __res_send(const unsigned char *msg, int msglen, unsigned char *answer, int anslen) __THROW
    __attribute__((alias("res_send")));
int __res_nquery(res_state state, const char *name, int class, int type, unsigned char *answer,
                 int anslen) __THROW __attribute__((alias("res_nquery")));
int __res_nsearch(res_state state, const char *name, int class, int type, unsigned char *answer,
                  int anslen) __THROW __attribute__((alias("res_nsearch")));
int __res_nquerydomain(res_state state, const char *name, const char *domain, int class,
                       int type, unsigned char *answer, int anslen) __THROW
    __attribute__((alias("res_nquerydomain")));
int __res_nsend(res_state state, const unsigned char *msg, int msglen, unsigned char *answer,
                int anslen) __THROW __attribute__((alias("res_nsend")));

/* SPDX-License-Identifier: MIT */
/* Description: the resolver's query calls (res_nquery, res_nsearch,
 * res_nquerydomain, res_nsend) wait for the name server on the offload
 * pool, not on the worker: the name server here is a user thread of this
 * process on a loopback UDP port, so a query that blocked the worker
 * (with CAP_WORKERS=1, the only one) would never be answered and would
 * fail after its timeout. Many queries run at once, each with its own
 * state. The implicit forms carry h_errno back from the pool. A program
 * built before glibc 2.34 calls the __res_* names (bound as an old
 * binary binds them: version GLIBC_2.2.5): they are the same functions,
 * and a query through one also waits on the pool. */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "io/io_util.h"

enum { QUERIERS = 16, ROUNDS = 4 };

/* The names a program built against glibc before 2.34 binds. */
int old_res_nquery(res_state, const char *, int, int, unsigned char *, int);
int old_res_query(const char *, int, int, unsigned char *, int);
__asm__(".symver old_res_nquery, __res_nquery@GLIBC_2.2.5");
__asm__(".symver old_res_query, __res_query@GLIBC_2.2.5");

/* p, as a value the optimizer knows nothing of. */
static void *opaque(void *p)
{
    __asm__("" : "+r"(p));
    return p;
}

/* h_errno is glibc's per kernel thread, behind a const accessor, like
 * errno: read and written out of line, so that its address is looked up
 * after the call, on the kernel thread the caller resumed on
 * (CAP_MIGRATE=1, tests.cmake). */
__attribute__((noinline)) static int h_errno_now(void)
{
    return h_errno;
}

__attribute__((noinline)) static void h_errno_clear(void)
{
    h_errno = 0;
}

static const unsigned char addr[4] = { 10, 1, 2, 3 };

/* Answers every query on sock with one A record, addr, until told to stop
 * by a query for "stop.test". */
static void *name_server(void *arg)
{
    int sock = *(int *)arg;
    for (;;) {
        unsigned char q[512], r[600];
        struct sockaddr_in from;
        socklen_t flen = sizeof from;
        ssize_t n = recvfrom(sock, q, sizeof q, 0, (struct sockaddr *)&from, &flen);
        CHECK(n > 12);
        size_t end = 12; /* the question: labels, then type and class */
        while (end < (size_t)n && q[end] != 0)
            end += (size_t)q[end] + 1;
        end += 1 + 4;
        CHECK(end <= (size_t)n);
        bool stop = memmem(q + 12, end - 12, "\4stop\4test", 10) != NULL;
        memcpy(r, q, end);
        r[2] = 0x81; /* QR, RD */
        r[3] = 0x80; /* RA, no error */
        r[6] = 0, r[7] = 1;  /* one answer */
        r[8] = 0, r[9] = 0;  /* no authority */
        r[10] = 0, r[11] = 0; /* no additional */
        static const unsigned char rr[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };
        memcpy(r + end, rr, sizeof rr);
        memcpy(r + end + sizeof rr, addr, sizeof addr);
        size_t len = end + sizeof rr + sizeof addr;
        CHECK_EQ(sendto(sock, r, len, 0, (struct sockaddr *)&from, flen), (ssize_t)len);
        if (stop)
            return NULL;
    }
}

static int port;

static void state_for_us(struct __res_state *st)
{
    memset(st, 0, sizeof *st);
    CHECK_EQ(res_ninit(st), 0);
    st->nscount = 1;
    st->nsaddr_list[0].sin_family = AF_INET;
    st->nsaddr_list[0].sin_port = htons((uint16_t)port);
    st->nsaddr_list[0].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    st->retrans = 2; /* seconds: a blocked worker fails the test */
    st->retry = 1;
}

/* The answer's last four bytes are the A record's address. */
static void check_answer(const unsigned char *ans, int len)
{
    CHECK(len >= 12 + 16);
    CHECK_EQ(ans[3] & 0x0f, 0); /* no error */
    CHECK_EQ(ans[7], 1);
    CHECK(memcmp(ans + len - 4, addr, 4) == 0);
}

static atomic_int answered;

static void *querier(void *arg)
{
    (void)arg;
    struct __res_state st;
    state_for_us(&st);
    for (int i = 0; i < ROUNDS; i++) {
        unsigned char ans[512];
        int len;
        switch (i % 4) {
        case 0:
            len = res_nquery(&st, "cap.test", C_IN, T_A, ans, sizeof ans);
            break;
        case 1:
            len = res_nsearch(&st, "cap.test", C_IN, T_A, ans, sizeof ans);
            break;
        case 2:
            len = res_nquerydomain(&st, "cap", "test", C_IN, T_A, ans, sizeof ans);
            break;
        default: {
            unsigned char msg[512];
            int mlen = res_nmkquery(&st, QUERY, "cap.test", C_IN, T_A, NULL, 0, NULL, msg,
                                    sizeof msg);
            CHECK(mlen > 0);
            len = res_nsend(&st, msg, mlen, ans, sizeof ans);
            break;
        }
        }
        CHECK(len > 0);
        check_answer(ans, len);
        atomic_fetch_add(&answered, 1);
    }
    res_nclose(&st);
    return NULL;
}

int main(void)
{
    int sock = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK_GE(sock, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(bind(sock, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    CHECK_EQ(getsockname(sock, (struct sockaddr *)&a, &alen), 0);
    port = ntohs(a.sin_port);
    cap_thread_t server = spawn(name_server, &sock);

    cap_thread_t t[QUERIERS];
    for (int i = 0; i < QUERIERS; i++)
        t[i] = spawn(querier, NULL);
    for (int i = 0; i < QUERIERS; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&answered), QUERIERS * ROUNDS);

    struct __res_state st;
    state_for_us(&st);
    unsigned char ans[512];
    /* As a program built before glibc 2.34 calls it. Compared as
     * addresses the compiler cannot see: two functions declared apart have
     * different addresses as far as C knows, and clang folds the
     * comparison to false (the names are one only through .symver). */
    CHECK(opaque((void *)old_res_nquery) == opaque((void *)res_nquery));
    CHECK(opaque((void *)old_res_query) == opaque((void *)res_query));
    CHECK(old_res_nquery(&st, "cap.test", C_IN, T_A, ans, sizeof ans) > 0); /* answered by the
                                                                                server here */
    CHECK(res_nquery(&st, "stop.test", C_IN, T_A, ans, sizeof ans) > 0);
    join(server);
    res_nclose(&st);
    CHECK_EQ(close(sock), 0);

    /* The implicit forms: a name too long to ask fails before any query,
     * with h_errno NO_RECOVERY, which must come back from the pool. */
    char longname[400];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    h_errno_clear();
    CHECK_EQ(res_query(longname, C_IN, T_A, ans, sizeof ans), -1);
    CHECK_EQ(h_errno_now(), NO_RECOVERY);
    h_errno_clear();
    CHECK_EQ(res_search(longname, C_IN, T_A, ans, sizeof ans), -1);
    CHECK(h_errno_now() != 0);
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a real third-party library compiled with no knowledge of
 * us (Debian's OpenSSL 3) on user threads. OpenSSL keeps each thread's
 * error queue in a glibc thread-specific key and initialises itself with
 * pthread_once and rwlocks, all glibc's names.
 * (1) Error queues are per user thread: one thread raises an error and
 *     parks, another on the same worker finds its own queue empty, raises
 *     its own, and each gets back exactly its own error. Before the
 *     library paired glibc's keys with its own, the user threads of a
 *     worker shared one queue: with one worker the second thread found
 *     the first one's error.
 * (2) TLS over socketpairs: PAIRS client and server user threads
 *     handshake (a self-signed P-256 certificate made here) and echo a
 *     message through OpenSSL's plain read/write socket calls, which
 *     park; with one worker a call that blocked the kernel thread would
 *     hang the test. */
#include <capriccio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

enum { PAIRS = 100 };

static cap_thread_t spawn(void *(*fn)(void *), void *arg)
{
    cap_thread_attr_t attr = CAP_THREAD_ATTR_INITIALIZER;
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, 256 * 1024), 0);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, &attr, fn, arg), 0);
    return t;
}

static void *join(cap_thread_t t)
{
    void *ret;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    return ret;
}

/* ---- (1) per-thread error queues ------------------------------------- */

static atomic_int stage;

static void *raiser(void *arg)
{
    int reason = (int)(intptr_t)arg;
    CHECK_EQ(ERR_peek_error(), 0); /* its own queue: empty */
    ERR_raise(ERR_LIB_USER, reason);
    atomic_fetch_add(&stage, 1);
    while (atomic_load(&stage) < 2)
        usleep(1000); /* parks: the other one runs meanwhile */
    unsigned long e = ERR_get_error();
    CHECK_EQ(ERR_GET_LIB(e), ERR_LIB_USER);
    CHECK_EQ(ERR_GET_REASON(e), reason);
    CHECK_EQ(ERR_get_error(), 0);
    return NULL;
}

static void error_queues(void)
{
    cap_thread_t a = spawn(raiser, (void *)(intptr_t)101);
    while (atomic_load(&stage) < 1)
        cap_yield();
    cap_thread_t b = spawn(raiser, (void *)(intptr_t)202);
    join(a);
    join(b);
}

/* ---- (2) TLS pairs -------------------------------------------------- */

static SSL_CTX *server_ctx, *client_ctx;

static void make_contexts(void)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    CHECK(key != NULL);
    X509 *cert = X509_new();
    CHECK(cert != NULL);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME *name = X509_get_subject_name(cert);
    CHECK_EQ(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                        (const unsigned char *)"capriccio-test", -1, -1, 0),
             1);
    CHECK_EQ(X509_set_issuer_name(cert, name), 1);
    CHECK_EQ(X509_set_pubkey(cert, key), 1);
    CHECK_GT(X509_sign(cert, key, EVP_sha256()), 0);

    server_ctx = SSL_CTX_new(TLS_server_method());
    client_ctx = SSL_CTX_new(TLS_client_method());
    CHECK(server_ctx != NULL && client_ctx != NULL);
    CHECK_EQ(SSL_CTX_use_certificate(server_ctx, cert), 1);
    CHECK_EQ(SSL_CTX_use_PrivateKey(server_ctx, key), 1);
    SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, NULL);
    X509_free(cert);
    EVP_PKEY_free(key);
}

struct pair {
    int fd[2];
    int id;
};

static void *server(void *arg)
{
    struct pair *p = arg;
    SSL *ssl = SSL_new(server_ctx);
    CHECK(ssl != NULL);
    CHECK_EQ(SSL_set_fd(ssl, p->fd[0]), 1);
    CHECK_EQ(SSL_accept(ssl), 1);
    char buf[64];
    int n = SSL_read(ssl, buf, sizeof buf);
    CHECK_GT(n, 0);
    CHECK_EQ(SSL_write(ssl, buf, n), n);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    return NULL;
}

static void *client(void *arg)
{
    struct pair *p = arg;
    SSL *ssl = SSL_new(client_ctx);
    CHECK(ssl != NULL);
    CHECK_EQ(SSL_set_fd(ssl, p->fd[1]), 1);
    CHECK_EQ(SSL_connect(ssl), 1);
    char msg[32], back[64];
    int len = snprintf(msg, sizeof msg, "hello from pair %d", p->id);
    CHECK_EQ(SSL_write(ssl, msg, len), len);
    int got = 0;
    while (got < len) {
        int n = SSL_read(ssl, back + got, (int)sizeof back - got);
        CHECK_GT(n, 0);
        got += n;
    }
    CHECK_EQ(got, len);
    CHECK(memcmp(back, msg, (size_t)len) == 0);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    return NULL;
}

static void tls_pairs(void)
{
    make_contexts();
    static struct pair pairs[PAIRS];
    cap_thread_t s[PAIRS], c[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        pairs[i].id = i;
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i].fd), 0);
        c[i] = spawn(client, &pairs[i]); /* clients first: they wait for servers */
        s[i] = spawn(server, &pairs[i]);
    }
    for (int i = 0; i < PAIRS; i++) {
        join(c[i]);
        join(s[i]);
        close(pairs[i].fd[0]);
        close(pairs[i].fd[1]);
    }
    SSL_CTX_free(server_ctx);
    SSL_CTX_free(client_ctx);
}

int main(void)
{
    error_queues();
    tls_pairs();
    return 0;
}

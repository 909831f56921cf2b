/* SPDX-License-Identifier: MIT */
/*
 * The per-connection loop, in plain blocking style: wait for a request
 * head, parse it, discard any body, answer, repeat while the connection is
 * kept alive. Pipelined requests need nothing special: bytes after one
 * request stay in the buffer and are parsed before the socket is read
 * again, and responses go out in order because one thread does both.
 *
 * Timeouts are absolute deadlines: the first head must complete within
 * --header-timeout of the accept; later ones may idle for
 * --keepalive-timeout before their first byte and then have
 * --header-timeout to complete. A client that trickles a byte at a time
 * (slowloris) therefore cannot extend its deadline. The clock is read only
 * when a deadline is needed: a later head that arrives whole in the first
 * read needs none (idle_fill), so a kept-alive request reads no clock here.
 *
 * A read waits with the socket's SO_RCVTIMEO, not with poll() first: one
 * system call per request instead of two on kernel threads, and on a user
 * thread package a read that parks and retries instead of a poll that
 * parks, polls again and then reads. Every connection inherits the
 * listener's timeout, knot_read_wait_ms() (server.c), which never outlasts
 * a fresh deadline, so on the common path the timeout is never changed;
 * conn_fill lowers it only when a read could overrun the deadline by more
 * than READ_SLACK_MS (a head that arrives in pieces, an idle wait past its
 * first expiry). A read that times out early just comes round again.
 *
 * Buffer: c->data, max_header_bytes for the head plus BODY_WINDOW for
 * body.c, allocated with the struct (server.c).
 */
#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "body.h"
#include "http.h"
#include "knot.h"
#include "log.h"
#include "response.h"
#include "serve.h"
#include "server.h"

enum { READ_SLACK_MS = 10 }; /* how late a timed-out read may notice */

/* Makes sure the next read waits at most about left_ms (> 0), and not so
 * much less that an idle connection keeps waking: a timeout lowered for
 * one deadline is raised again for a later, longer one. 0 or -1. */
static int bound_read_wait(struct conn *c, long long left_ms)
{
    long long want = left_ms < knot_read_wait_ms() ? left_ms : knot_read_wait_ms();
    if (c->read_wait_ms <= left_ms + READ_SLACK_MS && c->read_wait_ms >= want / 2)
        return 0;
    struct timeval tv = { (time_t)(want / 1000), (suseconds_t)(want % 1000 * 1000) };
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv))
        return -1;
    c->read_wait_ms = want;
    return 0;
}

long conn_fill(struct conn *c, size_t max, long long deadline_ms)
{
    if (max > c->cap - c->len)
        max = c->cap - c->len;
    for (;;) {
        long long left = deadline_ms - knot_now_ms();
        if (left <= 0)
            return -2;
        if (bound_read_wait(c, left)) /* left > 0: never the 0 that means forever */
            return -1;
        ssize_t n = read(c->fd, c->buf + c->len, max);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n < 0)
            return -1;
        c->len += (size_t)n;
        return (long)n;
    }
}

/* The first read of an idle wait, before its deadline is known: with the
 * socket's timeout as it is, which never outlasts the keep-alive timeout
 * (read_wait_ms <= knot_read_wait_ms(), bound_read_wait), so this read
 * cannot overrun the idle deadline. Data, end of input or an error need
 * no clock. A timeout or an interrupt sets *deadline, counted from no
 * later than the wait began (a timed-out read waited read_wait_ms at
 * least: a timeout is late, never early; an interrupted one may not have
 * waited), and goes on as conn_fill. */
static long idle_fill(struct conn *c, size_t max, long long *deadline)
{
    if (max > c->cap - c->len)
        max = c->cap - c->len;
    long long waited = c->read_wait_ms;
    ssize_t n = read(c->fd, c->buf + c->len, max);
    if (n >= 0) {
        c->len += (size_t)n;
        return (long)n;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        *deadline = knot_now_ms() - waited + knot_config.keepalive_timeout_ms;
    else if (errno == EINTR)
        *deadline = knot_now_ms() + knot_config.keepalive_timeout_ms;
    else
        return -1;
    return conn_fill(c, max, *deadline);
}

enum head_result { HEAD_OK, HEAD_CLOSED, HEAD_TIMEOUT, HEAD_TOO_BIG };

/* Waits until c->buf starts with a complete head; sets *head_len. */
static enum head_result read_head(struct conn *c, bool first, size_t *head_len)
{
    /* The first head's deadline counts from here (the accept); a later
     * one's idle deadline is set by idle_fill if its first read finds
     * nothing, its header deadline once a part of it came. */
    long long deadline = first ? knot_now_ms() + knot_config.header_timeout_ms : 0;
    bool have_deadline = first, head_deadline = first;
    bool started = false;
    size_t scanned = 0;
    size_t limit = knot_config.max_header_bytes;
    for (;;) {
        /* Empty lines before a request are allowed (RFC 9112 2.2). */
        size_t skip = 0;
        while (skip < c->len && (c->buf[skip] == '\r' || c->buf[skip] == '\n'))
            skip++;
        if (skip) {
            memmove(c->buf, c->buf + skip, c->len - skip);
            c->len -= skip;
            scanned = 0;
            if (c->len == 0 && !have_deadline) {
                /* Only blank lines: the idle wait goes on from now, late
                 * by the wait before them at most, and only once. */
                deadline = knot_now_ms() + knot_config.keepalive_timeout_ms;
                have_deadline = true;
            }
        }
        if (c->len > 0) {
            started = true;
            *head_len = http_head_length(c->buf, c->len < limit ? c->len : limit, &scanned);
            if (*head_len)
                return HEAD_OK;
            if (c->len >= limit)
                return HEAD_TOO_BIG;
            if (!head_deadline) /* the head's first part came just now */
                deadline = knot_now_ms() + knot_config.header_timeout_ms;
            have_deadline = head_deadline = true;
        }
        long n;
        if (have_deadline) {
            n = conn_fill(c, limit - c->len, deadline);
        } else {
            n = idle_fill(c, limit - c->len, &deadline);
            have_deadline = deadline != 0; /* unless it read at once */
        }
        if (n == -2)
            return started ? HEAD_TIMEOUT : HEAD_CLOSED;
        if (n <= 0)
            return HEAD_CLOSED;
    }
}

/* Answers a head that does not fit: 414 if the request line alone is too
 * long for the target limit, 431 otherwise. */
static int too_big_status(const struct conn *c)
{
    const char *lf = memchr(c->buf, '\n', c->len);
    const char *end = lf ? lf : c->buf + c->len;
    const char *sp1 = memchr(c->buf, ' ', (size_t)(end - c->buf));
    if (!sp1)
        return lf ? 431 : 414; /* no target seen: a method or line that never ends */
    const char *t = sp1 + 1;
    const char *sp2 = memchr(t, ' ', (size_t)(end - t));
    size_t tlen = (size_t)((sp2 ? sp2 : end) - t);
    return tlen > knot_config.max_uri_bytes || (!lf && !sp2) ? 414 : 431;
}

/* Answers with an error and ends the connection, logging it. */
static enum conn_end fail(struct conn *c, int status, const struct http_request *req)
{
    long long bytes = 0;
    int minor = req && req->method_name ? req->minor : 1;
    bool head_only = req && req->method == HTTP_HEAD;
    server_conn_busy(c);
    if (response_error(c->fd, status, minor, false, head_only, &bytes))
        return CONN_CLOSE;
    log_request(c->peer, req ? req->method_name : NULL, req ? req->target : NULL, minor, status, bytes);
    return CONN_LINGER;
}

size_t conn_buffer_bytes(void)
{
    return knot_config.max_header_bytes + BODY_WINDOW;
}

enum conn_end conn_serve(struct conn *c)
{
    for (bool first = true;; first = false) {
        if (!server_conn_idle(c))
            return CONN_CLOSE; /* shutting down */
        size_t head_len;
        switch (read_head(c, first, &head_len)) {
        case HEAD_OK:
            break;
        case HEAD_CLOSED:
            return CONN_CLOSE;
        case HEAD_TIMEOUT:
            return fail(c, 408, NULL);
        case HEAD_TOO_BIG:
            return fail(c, too_big_status(c), NULL);
        }
        server_conn_busy(c);

        struct http_request req;
        int status = http_parse_request(c->buf, head_len, knot_config.max_uri_bytes, &req);
        if (status)
            return fail(c, status, req.method_name ? &req : NULL);
        size_t next;
        status = body_discard(c, head_len, &req, &next);
        if (status < 0)
            return CONN_CLOSE;
        if (status)
            return fail(c, status, &req);

        bool keep = req.keep_alive && !server_stopping();
        struct served res = { 0 };
        if (req.method == HTTP_OTHER || req.method == HTTP_UNKNOWN) {
            res.status = req.method == HTTP_OTHER ? 405 : 501;
            res.failed = response_error(c->fd, res.status, req.minor, keep, false, &res.bytes) != 0;
        } else {
            serve_request(c->fd, &req, keep, &res);
        }
        log_request(c->peer, req.method_name, req.target, req.minor, res.status, res.bytes);
        if (res.failed)
            return CONN_CLOSE;
        if (!keep)
            return CONN_LINGER;
        memmove(c->buf, c->buf + next, c->len - next);
        c->len -= next;
    }
}

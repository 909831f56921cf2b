/* SPDX-License-Identifier: MIT */
/*
 * Discarding request bodies. A static server has no use for them, but must
 * read them to find the next request on a keep-alive connection, and must
 * bound them (413). Bodies are delimited by Content-Length or by chunked
 * transfer coding (RFC 9112 section 7.1). Input after the head is worked on
 * in the window c->buf[head..cap), which conn.c keeps at least
 * BODY_WINDOW bytes wide, so the parsed head stays valid meanwhile. The
 * whole body, however slow, must arrive within one --header-timeout.
 */
#include "body.h"

#include <string.h>

#include "knot.h"
#include "response.h"

static int discard_length(struct conn *c, size_t head, int64_t length, long long deadline,
                          size_t *next)
{
    size_t have = c->len - head;
    if ((uint64_t)length <= have) {
        *next = head + (size_t)length;
        return 0;
    }
    /* Throw away what is buffered; then read exactly the rest, never the
     * next request's bytes. */
    uint64_t left = (uint64_t)length - have;
    c->len = head;
    while (left > 0) {
        long n = conn_fill(c, left < c->cap - head ? (size_t)left : c->cap - head, deadline);
        if (n <= 0)
            return -1;
        left -= (uint64_t)n;
        c->len = head;
    }
    *next = head;
    return 0;
}

/* Finds the line starting at *pos in the window, reading more if needed.
 * Returns the line length (without its CRLF) and advances *pos past it;
 * -1 on failure, -2 if it cannot fit the window, -3 if it does not end
 * with CRLF or holds a control byte other than HTAB (400). */
static long next_line(struct conn *c, size_t head, size_t *pos, long long deadline, char **line)
{
    for (;;) {
        char *lf = memchr(c->buf + *pos, '\n', c->len - *pos);
        if (lf) {
            *line = c->buf + *pos;
            size_t n = (size_t)(lf - *line);
            *pos += n + 1;
            /* Chunked framing is CRLF only (RFC 9112 7.1): a bare LF, or a
             * CR or control byte inside the line, is what a front end may
             * read differently (request smuggling). */
            if (n == 0 || (*line)[n - 1] != '\r')
                return -3;
            n--;
            for (size_t i = 0; i < n; i++) {
                unsigned char b = (unsigned char)(*line)[i];
                if ((b < 0x20 && b != '\t') || b == 0x7f)
                    return -3;
            }
            return (long)n;
        }
        if (*pos > head) { /* slide the partial line to the window start */
            memmove(c->buf + head, c->buf + *pos, c->len - *pos);
            c->len -= *pos - head;
            *pos = head;
        }
        if (c->len == c->cap)
            return -2;
        if (conn_fill(c, c->cap, deadline) <= 0)
            return -1;
    }
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = (char)(ch | 0x20);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

static int discard_chunked(struct conn *c, size_t head, long long deadline, size_t *next)
{
    size_t pos = head;
    uint64_t total = 0;
    char *line;
    for (;;) {
        long n = next_line(c, head, &pos, deadline, &line);
        if (n < 0)
            return n == -1 ? -1 : 400;
        uint64_t size = 0;
        long i = 0;
        for (; i < n && hexval(line[i]) >= 0; i++) {
            if (size >> 60)
                return 413;
            size = size * 16 + (uint64_t)hexval(line[i]);
        }
        if (i == 0)
            return 400;
        long j = i; /* only BWS, then ';' and an extension, may follow */
        while (j < n && (line[j] == ' ' || line[j] == '\t'))
            j++;
        if (j < n && line[j] != ';')
            return 400;
        if (size > knot_config.max_body_bytes - total) /* total <= the limit: no wrap */
            return 413;
        total += size;
        if (size == 0)
            break;
        /* Skip the chunk's data, refilling the window as it drains. */
        while (size > 0) {
            size_t have = c->len - pos;
            if (size <= have) {
                pos += (size_t)size;
                break;
            }
            size -= have;
            pos = c->len = head;
            if (conn_fill(c, c->cap, deadline) <= 0)
                return -1;
        }
        n = next_line(c, head, &pos, deadline, &line);
        if (n != 0)
            return n == -1 ? -1 : 400; /* chunk data must end in CRLF */
    }
    for (;;) { /* trailer fields, up to the empty line */
        long n = next_line(c, head, &pos, deadline, &line);
        if (n < 0)
            return n == -2 ? 431 : n == -3 ? 400 : -1;
        if (n == 0)
            break;
    }
    *next = pos;
    return 0;
}

int body_discard(struct conn *c, size_t head, const struct http_request *req, size_t *next)
{
    if (!req->chunked && req->content_length <= 0) {
        *next = head; /* no body: the common case, no clock read */
        return 0;
    }
    long long deadline = knot_now_ms() + knot_config.header_timeout_ms;
    if (!req->chunked && (uint64_t)req->content_length > knot_config.max_body_bytes)
        return 413; /* before any 100 Continue: the client need not send it */
    /* A client that asked to be told before sending the body waits for a
     * 100 (RFC 9110 10.1.1: the server MUST send it or a final status);
     * not to HTTP/1.0 (MUST NOT), nor once body bytes are here. */
    static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
    if (req->expect_continue && req->minor >= 1 && c->len == head &&
        send_full(c->fd, go_on, sizeof go_on - 1, 0))
        return -1;
    if (req->chunked)
        return discard_chunked(c, head, deadline, next);
    return discard_length(c, head, req->content_length, deadline, next);
}

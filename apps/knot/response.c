/* SPDX-License-Identifier: MIT */
/*
 * The bytes Knot puts on the wire: response heads, error pages, and the
 * write/writev/sendfile loops that push a whole buffer or file range through
 * a blocking socket. Partial writes are resumed; EINTR is retried; any
 * other failure (peer gone, send timeout, a rate below --min-send-rate) is
 * reported once and the caller closes the connection. A file that ends
 * before the length promised is reported apart (RESPONSE_SHORT): nothing
 * is sent in place of the missing bytes.
 */
#include "response.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "httpdate.h"
#include "knot.h"

const char *response_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 416: return "Range Not Satisfiable";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

void response_head_init(struct response_head *h, int status, int minor, bool keep_alive)
{
    memset(h, 0, sizeof *h);
    h->status = status;
    h->minor = minor;
    h->keep_alive = keep_alive;
    h->content_length = -1;
    h->last_modified = -1;
    h->range_total = -1;
}

/* An append-only cursor; overflow sticks and is reported at the end. Heads
 * are built from strings and numbers by hand rather than with snprintf:
 * every response has one, and the format machinery was a visible share of
 * Knot's own time per request. */
struct out {
    char *p, *end;
    bool overflow;
};

/* Inlined, so that a literal's strlen and memcpy become constants. */
static inline __attribute__((always_inline)) void put_bytes(struct out *o, const char *s, size_t n)
{
    if (n > (size_t)(o->end - o->p)) {
        o->overflow = true;
        o->end = o->p; /* so that nothing fits after an overflow */
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

static inline __attribute__((always_inline)) void put(struct out *o, const char *s)
{
    put_bytes(o, s, strlen(s));
}

static void put_num(struct out *o, long long v)
{
    char digits[24], *d = digits + sizeof digits;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--d = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--d = '-';
    put_bytes(o, d, (size_t)(digits + sizeof digits - d));
}

/* "Name: value\r\n" */
static inline __attribute__((always_inline)) void put_field(struct out *o, const char *name,
                                                               const char *value)
{
    put(o, name);
    put(o, value);
    put(o, "\r\n");
}

/* Puts the Date field's value, formatted once per second per kernel
 * thread rather than on every response. Nothing here can block, so a user
 * thread cannot move to another kernel thread between the check and the
 * copy. */
static void put_now(struct out *o)
{
    static _Thread_local struct {
        time_t sec;
        char text[HTTPDATE_LEN + 1];
    } memo = { -1, "" };
    time_t now = time(NULL);
    if (now != memo.sec) {
        httpdate_format(now, memo.text);
        memo.sec = now;
    }
    put_bytes(o, memo.text, HTTPDATE_LEN);
}

size_t response_format(char *buf, size_t cap, const struct response_head *h)
{
    struct out o = { buf, buf + cap, false };
    char date[HTTPDATE_LEN + 1];
    put(&o, "HTTP/1.1 ");
    if (h->status >= 100 && h->status <= 999) { /* always: three digits by hand */
        char code[4] = { (char)('0' + h->status / 100), (char)('0' + h->status / 10 % 10),
                         (char)('0' + h->status % 10), ' ' };
        put_bytes(&o, code, sizeof code);
    } else {
        put_num(&o, h->status);
        put(&o, " ");
    }
    put(&o, response_reason(h->status));
    put(&o, "\r\nServer: knot\r\nDate: ");
    put_now(&o);
    put(&o, "\r\n");
    if (h->content_type)
        put_field(&o, "Content-Type: ", h->content_type);
    if (h->content_length >= 0) {
        put(&o, "Content-Length: ");
        put_num(&o, h->content_length);
        put(&o, "\r\n");
    }
    if (h->last_modified_text) {
        put_field(&o, "Last-Modified: ", h->last_modified_text);
    } else if (h->last_modified >= 0) {
        httpdate_format(h->last_modified, date);
        put_field(&o, "Last-Modified: ", date);
    }
    if (h->accept_ranges)
        put(&o, "Accept-Ranges: bytes\r\n");
    if (h->range_total >= 0 && h->range_first >= 0) {
        put(&o, "Content-Range: bytes ");
        put_num(&o, h->range_first);
        put(&o, "-");
        put_num(&o, h->range_last);
        put(&o, "/");
        put_num(&o, h->range_total);
        put(&o, "\r\n");
    } else if (h->range_total >= 0) {
        put(&o, "Content-Range: bytes */");
        put_num(&o, h->range_total);
        put(&o, "\r\n");
    }
    if (h->location)
        put_field(&o, "Location: ", h->location);
    if (h->status == 405)
        put(&o, "Allow: GET, HEAD\r\n");
    if (h->status == 503)
        put(&o, "Retry-After: 1\r\n");
    /* HTTP/1.1 is persistent unless told; HTTP/1.0 only when told. */
    if (!h->keep_alive)
        put(&o, "Connection: close\r\n");
    else if (h->minor == 0)
        put(&o, "Connection: keep-alive\r\n");
    put(&o, "\r\n");
    return o.overflow ? 0 : (size_t)(o.p - buf);
}

/* A response given up for lack of progress (the send timeout, or below
 * --min-send-rate) cannot be completed: its connection is reset when
 * closed (SO_LINGER 0), as with nginx's reset_timedout_connection. A
 * plain close would leave the kernel delivering what it holds queued,
 * megabytes, at the same slow rate (or holding it for a stalled reader)
 * long after the thread is gone. Returns -1 for the caller to return. */
static int reset_on_close(int fd)
{
    struct linger reset = { 1, 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    return -1;
}

/* The failure of a send call: a timeout resets (above). */
static int send_failed(int fd)
{
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK)
        reset_on_close(fd);
    errno = err;
    return -1;
}

/* --min-send-rate, measured over windows of --send-timeout: a loop starts
 * one with pace_start, adds what each call sent to bytes and, after each
 * call that left more to send, asks pace_ok, which fails when a window
 * that has just closed saw fewer bytes than the rate asks. A response that
 * goes out in one call reads the clock once (the coarse clock, from
 * memory) and checks nothing. The send timeout alone counts progress, as
 * nginx's send_timeout does: a reader that takes a little now and then
 * would hold its connection and thread for as long as it likes. */
struct pace {
    int fd;
    long long start;
    unsigned long long bytes;
};

static void pace_start(struct pace *p, int fd)
{
    p->fd = fd;
    p->start = knot_config.min_send_rate ? knot_now_ms() : 0;
    p->bytes = 0;
}

static bool pace_ok(struct pace *p)
{
    if (!knot_config.min_send_rate)
        return true;
    long long elapsed = knot_now_ms() - p->start;
    if (elapsed < knot_config.send_timeout_ms)
        return true;
    if (p->bytes * 1000 < (unsigned long long)knot_config.min_send_rate * (unsigned long long)elapsed) {
        reset_on_close(p->fd);
        errno = ETIMEDOUT;
        return false;
    }
    p->start += elapsed;
    p->bytes = 0;
    return true;
}

static int send_paced(int fd, const void *buf, size_t len, int flags, struct pace *p)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return send_failed(fd);
        }
        buf = (const char *)buf + n;
        len -= (size_t)n;
        p->bytes += (size_t)n;
        if (len > 0 && !pace_ok(p))
            return -1;
    }
    return 0;
}

int send_full(int fd, const void *buf, size_t len, int flags)
{
    struct pace p;
    pace_start(&p, fd);
    return send_paced(fd, buf, len, flags, &p);
}

int writev_full(int fd, struct iovec *iov, int iovcnt)
{
    struct pace p;
    pace_start(&p, fd);
    while (iovcnt > 0) {
        ssize_t n = writev(fd, iov, iovcnt);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return send_failed(fd);
        }
        p.bytes += (size_t)n;
        while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
            if (!pace_ok(&p))
                return -1;
        }
    }
    return 0;
}

/* The most one sendfile call is asked for. On NPTL a blocking sendfile
 * returns only when done or when one of its 64 KiB pieces stalls for the
 * send timeout, so a reader that keeps each piece moving holds one call for
 * as long as its length lasts; a bounded length brings every call back to
 * pace_ok within 16 send timeouts (keeping 64 KiB moving per timeout is
 * 2 KiB/s at the default 30 s, above the default rate anyway). On
 * Capriccio one call lasts at most the send timeout. Above the benchmark's
 * largest file (900 KiB): a 256 KiB bound added 0.02 sendfile calls per
 * request there, and cost.py showed 3% more CPU per request. */
enum { SENDFILE_CALL_MAX = 1024 * 1024 };

int sendfile_full(int sock, int file, off_t offset, size_t len)
{
    struct pace p;
    pace_start(&p, sock);
    while (len > 0) {
        ssize_t n = sendfile(sock, file, &offset, len < SENDFILE_CALL_MAX ? len : SENDFILE_CALL_MAX);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return send_failed(sock);
        if (n == 0)
            return RESPONSE_SHORT; /* the file shrank under us */
        len -= (size_t)n;
        p.bytes += (size_t)n;
        if (len > 0 && !pace_ok(&p))
            return -1;
    }
    return 0;
}

/* The copy buffer of copy_full: on the heap, as connection stacks are small. */
enum { COPY_CHUNK = 64 * 1024 };

int copy_full(int sock, int file, off_t offset, size_t len)
{
    char *buf = malloc(len < COPY_CHUNK ? len : COPY_CHUNK);
    if (!buf)
        return -1;
    struct pace p;
    pace_start(&p, sock);
    int rc = 0;
    while (len > 0 && rc == 0) {
        ssize_t n = pread(file, buf, len < COPY_CHUNK ? len : COPY_CHUNK, offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -1 : RESPONSE_SHORT;
            break;
        }
        /* A truncation that lands during the pread may zero the bytes past
         * its cut after pread checked the size; the size it set first is
         * seen here, and only the bytes below it are the file's. */
        struct stat st;
        if (fstat(file, &st)) {
            rc = -1;
            break;
        }
        if (st.st_size < offset + n) {
            n = st.st_size > offset ? (ssize_t)(st.st_size - offset) : 0;
            rc = RESPONSE_SHORT;
        }
        if (send_paced(sock, buf, (size_t)n, 0, &p))
            rc = -1;
        offset += n;
        len -= (size_t)n;
        if (len > 0 && rc == 0 && !pace_ok(&p))
            rc = -1;
    }
    free(buf);
    return rc;
}

int response_error(int fd, int status, int minor, bool keep_alive, bool head_only, long long *bytes)
{
    char body[160], head[512];
    int blen = snprintf(body, sizeof body,
                        "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>"
                        "<body><h1>%d %s</h1></body></html>\n",
                        status, response_reason(status), status, response_reason(status));
    struct response_head h;
    response_head_init(&h, status, minor, keep_alive);
    h.content_type = "text/html; charset=utf-8";
    h.content_length = blen;
    size_t hlen = response_format(head, sizeof head, &h);
    struct iovec iov[2] = { { head, hlen }, { body, (size_t)blen } };
    if (writev_full(fd, iov, head_only ? 1 : 2))
        return -1;
    if (!head_only)
        *bytes += blen;
    return 0;
}

void lingering_close(int fd)
{
    char sink[4096];
    size_t budget = 256 * 1024;
    long long deadline = knot_now_ms() + 1000;
    shutdown(fd, SHUT_WR);
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (long long left; budget > 0 && (left = deadline - knot_now_ms()) > 0;) {
        if (poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = read(fd, sink, sizeof sink);
        if (n <= 0)
            break;
        budget -= (size_t)n < budget ? (size_t)n : budget;
    }
    close(fd);
}

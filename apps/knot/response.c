/* SPDX-License-Identifier: MIT */
/*
 * The bytes Knot puts on the wire: response heads, error pages, and the
 * write/writev/sendfile loops that push a whole buffer or file range through
 * a blocking socket. Partial writes are resumed; EINTR is retried; any
 * other failure (peer gone, send timeout) is reported once and the caller
 * closes the connection.
 */
#include "response.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
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

static void put_bytes(struct out *o, const char *s, size_t n)
{
    if (o->overflow || n > (size_t)(o->end - o->p)) {
        o->overflow = true;
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

static void put(struct out *o, const char *s)
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
static void put_field(struct out *o, const char *name, const char *value)
{
    put(o, name);
    put(o, value);
    put(o, "\r\n");
}

/* The Date field's value, formatted once per second per kernel thread
 * rather than on every response. Nothing here can block, so a user thread
 * cannot move to another kernel thread between the check and the copy. */
static void format_now(char *out)
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
    memcpy(out, memo.text, sizeof memo.text);
}

size_t response_format(char *buf, size_t cap, const struct response_head *h)
{
    struct out o = { buf, buf + cap, false };
    char date[HTTPDATE_LEN + 1];
    format_now(date);
    put(&o, "HTTP/1.1 ");
    put_num(&o, h->status);
    put(&o, " ");
    put(&o, response_reason(h->status));
    put(&o, "\r\nServer: knot\r\n");
    put_field(&o, "Date: ", date);
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

int send_full(int fd, const void *buf, size_t len, int flags)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf = (const char *)buf + n;
        len -= (size_t)n;
    }
    return 0;
}

int writev_full(int fd, struct iovec *iov, int iovcnt)
{
    while (iovcnt > 0) {
        ssize_t n = writev(fd, iov, iovcnt);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

int sendfile_full(int sock, int file, off_t offset, size_t len)
{
    while (len > 0) {
        ssize_t n = sendfile(sock, file, &offset, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1; /* error, or the file shrank under us */
        len -= (size_t)n;
    }
    return 0;
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

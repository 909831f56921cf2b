/* SPDX-License-Identifier: MIT */
/* HTTP/1.x request heads and Range headers, see http_parse.c. */
#ifndef KNOT_HTTP_H
#define KNOT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* HTTP_OTHER: a method Knot knows but does not allow (405); HTTP_UNKNOWN:
 * one it does not recognise (501, RFC 9110 9.1). Methods are
 * case-sensitive: "get" is unknown. */
enum http_method { HTTP_GET, HTTP_HEAD, HTTP_OTHER, HTTP_UNKNOWN };

/* A parsed request head. The strings point into the connection's buffer,
 * which the parser has NUL-terminated in place; they live until the request
 * is consumed. */
struct http_request {
    enum http_method method;
    const char *method_name;
    const char *target;        /* as sent, not decoded */
    int minor;                 /* HTTP/1.<minor> */
    bool keep_alive;           /* what the client asked for */
    int64_t content_length;    /* -1: none */
    bool chunked;              /* Transfer-Encoding: chunked */
    const char *if_modified_since;
    const char *if_none_match;
    const char *range;
    const char *if_range;
    bool expect_continue;      /* Expect: 100-continue */
};

/* Length of the head at the start of buf (request line, headers and the
 * empty line), or 0 while incomplete. *scanned remembers how far previous
 * calls got, so a head arriving a byte at a time is scanned once; start it
 * at 0 for each new head. Lines end in LF, optionally preceded by CR. */
size_t http_head_length(const char *buf, size_t len, size_t *scanned);

/* Parses the head buf[0..len) (len from http_head_length). Returns 0, or the
 * status to answer with: 400 malformed, 414 target longer than max_uri, 431
 * too many header fields, 501 a transfer coding other than chunked before a
 * final chunked, 505 a version
 * other than HTTP/1.x. */
int http_parse_request(char *buf, size_t len, size_t max_uri, struct http_request *req);

/* A Range header against a representation of `size` bytes. Numbers too
 * large for int64 count as INT64_MAX. A suffix range of an empty
 * representation is RANGE_NONE (there are no bytes to put in a 206). */
enum http_range_kind {
    RANGE_NONE,          /* absent, invalid, or several ranges of which
                            one is satisfiable: send it all (200) */
    RANGE_SATISFIABLE,   /* send bytes first..last inclusive (206) */
    RANGE_UNSATISFIABLE, /* 416 */
};
/* *first and *last are written only for RANGE_SATISFIABLE. */
enum http_range_kind http_parse_range(const char *value, int64_t size, int64_t *first, int64_t *last);

#endif /* KNOT_HTTP_H */

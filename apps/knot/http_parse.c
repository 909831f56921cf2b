/* SPDX-License-Identifier: MIT */
/*
 * The HTTP/1.x request grammar (RFC 9112): finding the end of a head,
 * splitting the request line, and the few header fields Knot acts on.
 * Strict where leniency enables request smuggling (whitespace before the
 * colon, obsolete line folding, conflicting Content-Length, Content-Length
 * with Transfer-Encoding, duplicate or malformed Host, a NUL anywhere): those
 * are 400.
 * Pure functions of the bytes; no I/O, no allocation.
 */
#include "http.h"

#include <string.h>
#include <strings.h>

#define MAX_FIELDS 100

size_t http_head_length(const char *buf, size_t len, size_t *scanned)
{
    /* The head ends at the first LF that is followed by LF or CR LF. memchr
     * jumps from one LF to the next: most bytes of a head are not LFs. */
    size_t i = *scanned;
    while (i < len) {
        const char *lf = memchr(buf + i, '\n', len - i);
        if (!lf) {
            i = len;
            break;
        }
        i = (size_t)(lf - buf);
        if (i + 1 >= len)
            break;
        if (buf[i + 1] == '\n')
            return i + 2;
        if (buf[i + 1] == '\r') {
            if (i + 2 >= len)
                break;
            if (buf[i + 2] == '\n')
                return i + 3;
        }
        i++;
    }
    *scanned = i;
    return 0;
}

/* Character classes, one table lookup per byte instead of comparisons and
 * a strchr: the parser looks at every byte of every request. */
enum {
    C_TCHAR = 1,  /* token (RFC 9110 5.6.2) */
    C_HOST = 2,   /* reg-name, IP literal and port characters */
    C_TARGET = 4, /* visible ASCII, what a request target may hold */
};

static const unsigned char cclass[256] = {
    ['0' ... '9'] = C_TCHAR | C_HOST | C_TARGET,
    ['a' ... 'z'] = C_TCHAR | C_HOST | C_TARGET,
    ['A' ... 'Z'] = C_TCHAR | C_HOST | C_TARGET,
    ['!'] = C_TCHAR | C_HOST | C_TARGET, ['#'] = C_TCHAR | C_TARGET,
    ['$'] = C_TCHAR | C_HOST | C_TARGET, ['%'] = C_TCHAR | C_HOST | C_TARGET,
    ['&'] = C_TCHAR | C_HOST | C_TARGET, ['\''] = C_TCHAR | C_HOST | C_TARGET,
    ['*'] = C_TCHAR | C_HOST | C_TARGET, ['+'] = C_TCHAR | C_HOST | C_TARGET,
    ['-'] = C_TCHAR | C_HOST | C_TARGET, ['.'] = C_TCHAR | C_HOST | C_TARGET,
    ['^'] = C_TCHAR | C_TARGET, ['_'] = C_TCHAR | C_HOST | C_TARGET,
    ['`'] = C_TCHAR | C_TARGET, ['|'] = C_TCHAR | C_TARGET,
    ['~'] = C_TCHAR | C_HOST | C_TARGET,
    ['('] = C_HOST | C_TARGET, [')'] = C_HOST | C_TARGET, [','] = C_HOST | C_TARGET,
    [';'] = C_HOST | C_TARGET, ['='] = C_HOST | C_TARGET, [':'] = C_HOST | C_TARGET,
    ['['] = C_HOST | C_TARGET, [']'] = C_HOST | C_TARGET,
    ['"'] = C_TARGET, ['/'] = C_TARGET, ['<'] = C_TARGET, ['>'] = C_TARGET,
    ['?'] = C_TARGET, ['@'] = C_TARGET, ['\\'] = C_TARGET, ['{'] = C_TARGET,
    ['}'] = C_TARGET,
};

static bool is_tchar(unsigned char c)
{
    return cclass[c] & C_TCHAR;
}

/* Cuts the line starting at *p (ending in LF, maybe CR LF) and NUL-terminates
 * it; returns it, sets *stop to its NUL and advances *p past the LF. A bare
 * CR inside is an error the callers catch through their character checks. */
static char *take_line(char **p, char *end, char **stop)
{
    char *line = *p;
    char *lf = memchr(line, '\n', (size_t)(end - line));
    char *s = lf;
    if (s > line && s[-1] == '\r')
        s--;
    *s = '\0';
    *p = lf + 1;
    *stop = s;
    return line;
}

static enum http_method method_of(const char *m)
{
    /* RFC 9110 section 9 and PATCH (RFC 5789): known, not allowed here. */
    static const char *const others[] = { "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH" };
    if (!strcmp(m, "GET"))
        return HTTP_GET;
    if (!strcmp(m, "HEAD"))
        return HTTP_HEAD;
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (!strcmp(m, others[i]))
            return HTTP_OTHER;
    return HTTP_UNKNOWN;
}

static int parse_request_line(char *line, size_t max_uri, struct http_request *req)
{
    /* One pass over each part: the method is tokens up to the first space,
     * the target visible characters up to the next. */
    char *sp1 = line;
    while (is_tchar((unsigned char)*sp1))
        sp1++;
    if (*sp1 != ' ' || sp1 == line)
        return 400;
    *sp1 = '\0';
    char *target = sp1 + 1;
    char *sp2 = target;
    while (cclass[(unsigned char)*sp2] & C_TARGET)
        sp2++;
    if (*sp2 != ' ') {
        /* A bad character or no version: 414 still wins if the target,
         * up to the next space, is too long; 400 otherwise. */
        char *sp = strchr(sp2, ' ');
        return sp && (size_t)(sp - target) > max_uri ? 414 : 400;
    }
    if (sp2 == target)
        return 400; /* includes HTTP/0.9's version-less line */
    *sp2 = '\0';
    if ((size_t)(sp2 - target) > max_uri)
        return 414;
    const char *v = sp2 + 1; /* compared a byte at a time: it may end early */
    if (v[0] != 'H' || v[1] != 'T' || v[2] != 'T' || v[3] != 'P' || v[4] != '/' || v[5] < '0' ||
        v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9' || v[8])
        return 400;
    if (v[5] != '1')
        return 505;
    req->method_name = line;
    req->method = method_of(line);
    req->target = target;
    req->minor = v[7] - '0';
    return 0;
}

/* Whether a Host value can be uri-host [ ":" port ] (RFC 9112 3.2, RFC
 * 3986 3.2.2): only the characters of reg-name, IP literals and ports;
 * empty is allowed. */
static bool host_ok(const char *v)
{
    for (; *v; v++)
        if (!(cclass[(unsigned char)*v] & C_HOST))
            return false;
    return true;
}

/* The next element of a comma-separated list at *p, without the spaces
 * and tabs around it: false at the end of the list. */
static bool next_list_item(const char **p, const char **item, size_t *len)
{
    const char *q = *p;
    while (*q == ' ' || *q == '\t' || *q == ',')
        q++;
    if (!*q)
        return false;
    const char *start = q;
    while (*q && *q != ',')
        q++;
    const char *stop = q;
    while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t'))
        stop--;
    *p = q;
    *item = start;
    *len = (size_t)(stop - start);
    return true;
}

/* Whether the comma-separated list `value` has the token `want`. */
static bool list_has(const char *value, const char *want)
{
    size_t n = strlen(want), len;
    const char *p = value, *item;
    while (next_list_item(&p, &item, &len))
        if (len == n && !strncasecmp(item, want, n))
            return true;
    return false;
}

/* What the Transfer-Encoding field lines say, all lines together: the
 * codings form one list (RFC 9110 5.3). */
struct codings {
    int chunked;        /* how many times "chunked" appears */
    bool last_chunked;  /* the list ends with it */
    bool other;         /* a coding Knot does not know */
};

static void add_codings(const char *value, struct codings *tc)
{
    size_t len;
    const char *p = value, *item;
    while (next_list_item(&p, &item, &len)) {
        tc->last_chunked = len == 7 && !strncasecmp(item, "chunked", 7);
        if (tc->last_chunked)
            tc->chunked++;
        else
            tc->other = true;
    }
}

/* RFC 9112 6.1 and 6.3: the body's length is known only if chunked is the
 * final coding (400 otherwise, and always in HTTP/1.0, which has no
 * transfer codings), applied once (7); other codings are not implemented
 * (501). */
static int check_codings(const struct codings *tc, int minor)
{
    if (minor == 0 || !tc->last_chunked || tc->chunked > 1)
        return 400;
    return tc->other ? 501 : 0;
}

static int parse_content_length(const char *v, int64_t *out)
{
    if (!*v)
        return 400;
    int64_t n = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9')
            return 400;
        if (n > (INT64_MAX - 9) / 10)
            n = INT64_MAX; /* absurdly large: the body limit rejects it */
        else
            n = n * 10 + (*v - '0');
    }
    if (*out >= 0 && *out != n)
        return 400;
    *out = n;
    return 0;
}

int http_parse_request(char *buf, size_t len, size_t max_uri, struct http_request *req)
{
    char *p = buf, *end = buf + len;
    memset(req, 0, sizeof *req);
    req->content_length = -1;
    /* A NUL would cut a line short where the string functions below look:
     * a line starting with one would even end the head early, hiding the
     * fields after it (RFC 9110 5.5: reject, or replace it with SP). */
    if (memchr(buf, '\0', len))
        return 400;

    char *stop;
    int status = parse_request_line(take_line(&p, end, &stop), max_uri, req);
    if (status)
        return status;

    bool have_host = false, have_te = false, conn_close = false, conn_keep = false;
    struct codings tc = { 0, false, false };
    int nfields = 0;
    for (;;) {
        char *line = take_line(&p, end, &stop);
        if (line == stop)
            break;
        if (++nfields > MAX_FIELDS)
            return 431;
        char *colon = line;
        while (is_tchar((unsigned char)*colon))
            colon++;
        if (*colon != ':' || colon == line)
            return 400; /* no name, whitespace before ':', or obs-fold */
        *colon = '\0';
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        char *vend = stop; /* value <= stop: the skip stops at its NUL */
        while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t'))
            vend--;
        *vend = '\0';
        const char *name = line;
        size_t name_len = (size_t)(colon - line);
        if (name_len == 4 && !strcasecmp(name, "host")) {
            /* Checked apart: host_ok admits no control character. */
            if (have_host || !host_ok(value))
                return 400;
            have_host = true;
            continue;
        }
        for (char *c = value; *c; c++)
            if ((unsigned char)*c < 0x20 && *c != '\t')
                return 400;

        /* Only names of the right length are compared. */
        switch (name_len) {
        case 10:
            if (!strcasecmp(name, "connection")) {
                conn_close |= list_has(value, "close");
                conn_keep |= list_has(value, "keep-alive");
            }
            break;
        case 14:
            if (!strcasecmp(name, "content-length") && parse_content_length(value, &req->content_length))
                return 400;
            break;
        case 17:
            if (!strcasecmp(name, "transfer-encoding")) {
                add_codings(value, &tc);
                have_te = true;
            } else if (!strcasecmp(name, "if-modified-since")) {
                req->if_modified_since = value;
            }
            break;
        case 5:
            if (!strcasecmp(name, "range"))
                req->range = value;
            break;
        case 13:
            if (!strcasecmp(name, "if-none-match"))
                req->if_none_match = value;
            break;
        case 8:
            if (!strcasecmp(name, "if-range"))
                req->if_range = value;
            break;
        case 6:
            if (!strcasecmp(name, "expect"))
                req->expect_continue |= list_has(value, "100-continue");
            break;
        }
    }
    if (have_te && req->content_length >= 0)
        return 400;
    if (have_te && (status = check_codings(&tc, req->minor)) != 0)
        return status;
    if (req->minor >= 1 && !have_host)
        return 400;
    req->chunked = have_te;
    req->keep_alive = req->minor >= 1 ? !conn_close : (conn_keep && !conn_close);
    return 0;
}

/* A decimal number, saturating at INT64_MAX: a position that large is past
 * the end of any file, which is what it means. */
static bool parse_pos(const char **s, int64_t *out)
{
    const char *p = *s;
    int64_t v = 0;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v > (INT64_MAX - (*p - '0')) / 10 ? INT64_MAX : v * 10 + (*p - '0');
    *s = p;
    *out = v;
    return true;
}

/* One range-spec, [p, end) without surrounding whitespace (RFC 9110
 * 14.1.2). RANGE_NONE: invalid. */
static enum http_range_kind one_range(const char *p, const char *end, int64_t size, int64_t *first,
                                      int64_t *last)
{
    int64_t a, b;
    if (*p == '-') { /* suffix-range */
        p++;
        if (!parse_pos(&p, &b) || p != end)
            return RANGE_NONE;
        if (b == 0)
            return RANGE_UNSATISFIABLE;
        if (size == 0)
            return RANGE_NONE; /* satisfiable, but nothing to send: all of it (200) */
        *first = b >= size ? 0 : size - b;
        *last = size - 1;
        return RANGE_SATISFIABLE;
    }
    if (!parse_pos(&p, &a) || p == end || *p++ != '-')
        return RANGE_NONE;
    if (p != end) {
        if (!parse_pos(&p, &b) || p != end || b < a)
            return RANGE_NONE;
    } else {
        b = INT64_MAX;
    }
    if (a >= size)
        return RANGE_UNSATISFIABLE;
    *first = a;
    *last = b >= size ? size - 1 : b;
    return RANGE_SATISFIABLE;
}

/* One range is served as asked (206 or 416). Several are not served as
 * multipart/byteranges: the whole representation is sent instead (200, as
 * RFC 9110 14.2 allows), unless none of them is satisfiable (416). Any
 * invalid range-spec makes the header ignored. */
enum http_range_kind http_parse_range(const char *value, int64_t size, int64_t *first, int64_t *last)
{
    const char *p = value;
    if (strncasecmp(p, "bytes", 5))
        return RANGE_NONE;
    p += 5;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p++ != '=')
        return RANGE_NONE;
    int specs = 0;
    bool any_satisfiable = false;
    int64_t sat_first = 0, sat_last = 0; /* *first, *last: only on a 206 */
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *end = p + strcspn(p, ",");
        const char *stop = end;
        while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t'))
            stop--;
        if (stop > p) { /* empty list elements are allowed (RFC 9110 5.6.1) */
            int64_t f, l;
            enum http_range_kind k = one_range(p, stop, size, &f, &l);
            if (k == RANGE_NONE)
                return RANGE_NONE;
            if (k == RANGE_SATISFIABLE && !any_satisfiable) {
                any_satisfiable = true;
                sat_first = f;
                sat_last = l;
            }
            specs++;
        }
        if (!*end)
            break;
        p = end + 1;
    }
    if (specs == 0)
        return RANGE_NONE;
    if (!any_satisfiable)
        return RANGE_UNSATISFIABLE;
    if (specs > 1)
        return RANGE_NONE;
    *first = sat_first;
    *last = sat_last;
    return RANGE_SATISFIABLE;
}

/* SPDX-License-Identifier: MIT */
/*
 * A mutation fuzzer for Knot's pure parsing code, built with ASan and UBSan:
 * http_head_length, http_parse_request, http_parse_range (http_parse.c),
 * path_from_target (path.c) and httpdate_parse (httpdate.c). Inputs are a
 * built-in corpus of valid and invalid requests, mutated by byte edits,
 * splices, dictionary tokens (CR/LF variants, NULs, percent escapes, long
 * numbers) and long repeats. Every input is copied into a heap block of
 * exactly its size, so a read past the end is an ASan error. Besides
 * crashes it checks invariants:
 *   - the head length is what a naive scan finds, however the bytes arrive;
 *   - parsed strings lie inside the head; a head with a NUL, an obs-fold
 *     line or a Content-Length beside Transfer-Encoding is refused;
 *   - a normalised path equals an independent model's: no leading '/', no
 *     empty, "." or ".." segments, never above the root, within its buffer;
 *   - a satisfiable Range is 0 <= first <= last < size, and agrees with a
 *     model of RFC 9110 section 14.1.2;
 *   - a parsed date formats back to itself.
 * Inputs grow a pool when they reach a new combination of outcomes, a
 * cheap stand-in for coverage feedback.
 *
 * Usage: knot_fuzz [--seed N] [--iters N] [--seconds S] [--save FILE]
 * Exit 0: no failure; 1: an invariant failed (the input is printed and
 * written to --save); sanitizer errors abort.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "httpdate.h"
#include "knot.h"
#include "path.h"

struct knot_config knot_config; /* path.c reads it; path_from_target does not */

static const char *save_path;

/* ------------------------------------------------------------ randomness */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* ------------------------------------------------------------ the corpus */

/* Seeds as literals with their sizes, so that they may hold NULs. */
#define SEED(s) { s, sizeof s - 1 }
static const struct {
    const char *s;
    size_t n;
} seeds[] = {
    SEED("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /a.txt HTTP/1.0\r\n\r\n"),
    SEED("HEAD /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
    SEED("GET /a.txt HTTP/1.1\nHost: x\nConnection: close\n\n"),
    SEED("GET http://example.com/sub/../a.txt?q=1#f HTTP/1.1\r\nHost: y\r\n\r\n"),
    SEED("GET https://h:8080 HTTP/1.1\r\nHost: h\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-500\r\nIf-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=5-2\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1,5-9\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-0\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes= 999999-, ,-0 , 5-\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-9223372036854775807\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9223372036854775808\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\n\0\r\nTransfer-Encoding: chunked\r\n\r\n"),
    SEED("GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999999999999999-\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sunday, 06-Nov-94 08:49:37 GMT\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sun Nov  6 08:49:37 1994\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 31 Dec 9999 23:59:59 GMT\r\n\r\n"),
    SEED("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
    SEED("POST /form HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost : x\r\n\r\n"),
    SEED("get / HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET / HTTP/2.0\r\nHost: x\r\n\r\n"),
    SEED("GET /%2e%2e/%2E%2e%2fsecret HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /a/./b/../../c/%2f/./.. HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /%00 HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /sub%2F..%2F..%2Fetc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /..;/x HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"),
    SEED("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n"),
};

static const char *const tokens[] = {
    " ", "\t", "\r", "\n", "\r\n", "\r\n\r\n", "\n\n", "\r\r\n", "\0", ":", ",", ";", "-", "=",
    "/", "//", ".", "..", "/..", "/../", "/./", "%", "%2", "%2e", "%2E%2e", "%2f", "%2F", "%00",
    "%5c", "%25", "%ff", "?", "#", "http://", "HTTP/1.1", "HTTP/1.0", "HTTP/1.", "Host: x\r\n",
    "Range: bytes=", "bytes=", "Content-Length: ", "Transfer-Encoding: chunked\r\n", "chunked",
    "Connection: close\r\n", "keep-alive", "If-Range: ", "If-Modified-Since: ",
    "9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999999",
    "-1", "0", "00000000000000000000001", "GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "\x7f", "\x80",
    "\xff",
};

enum { MAX_INPUT = 12000, POOL_CAP = 4096 };

struct input {
    size_t len;
    char *bytes;
};

static struct input pool[POOL_CAP];
static size_t npool;

static void pool_add(const char *b, size_t len)
{
    if (npool == POOL_CAP) { /* replace a random entry past the seeds */
        size_t victim = sizeof seeds / sizeof *seeds + below(POOL_CAP - sizeof seeds / sizeof *seeds);
        free(pool[victim].bytes);
        npool--;
        pool[victim] = pool[npool];
    }
    pool[npool].bytes = malloc(len ? len : 1);
    memcpy(pool[npool].bytes, b, len);
    pool[npool].len = len;
    npool++;
}

/* ------------------------------------------------------------ mutation */

static void insert(char *b, size_t *len, size_t at, const char *s, size_t n)
{
    if (*len + n > MAX_INPUT)
        n = MAX_INPUT - *len;
    memmove(b + at + n, b + at, *len - at);
    memcpy(b + at, s, n);
    *len += n;
}

static void mutate(char *b, size_t *len)
{
    int rounds = 1 + (int)below(8);
    for (int r = 0; r < rounds; r++) {
        size_t at = below(*len + 1);
        switch (below(10)) {
        case 0: /* flip bits */
            if (*len)
                b[below(*len)] ^= (char)(1u << below(8));
            break;
        case 1: /* a random byte */
            if (*len)
                b[below(*len)] = (char)rnd();
            break;
        case 2: { /* insert a random byte */
            char c = (char)rnd();
            insert(b, len, at, &c, 1);
            break;
        }
        case 3: { /* delete a range */
            size_t n = below(*len - at + 1);
            if (n > 16 && below(2))
                n = below(16);
            memmove(b + at, b + at + n, *len - at - n);
            *len -= n;
            break;
        }
        case 4:
        case 5: { /* a dictionary token (a "\0" token is one NUL byte) */
            const char *t = tokens[below(sizeof tokens / sizeof *tokens)];
            insert(b, len, at, t, *t ? strlen(t) : 1);
            break;
        }
        case 6: { /* duplicate a range */
            if (!*len)
                break;
            size_t from = below(*len), n = below(*len - from) + 1;
            char tmp[MAX_INPUT];
            memcpy(tmp, b + from, n);
            insert(b, len, at, tmp, n);
            break;
        }
        case 7: { /* splice in part of another pool input */
            const struct input *o = &pool[below(npool)];
            if (!o->len)
                break;
            size_t from = below(o->len), n = below(o->len - from) + 1;
            insert(b, len, at, o->bytes + from, n);
            break;
        }
        case 8: { /* a long repeat: long headers, long paths, long numbers */
            static const char *const reps[] = { "a", "/", "../", "%2e%2e/", "./", "9", "X-A: b\r\n", " ", "0" };
            const char *t = reps[below(sizeof reps / sizeof *reps)];
            size_t times = 1 + below(below(2) ? 64 : 3000), tl = strlen(t), n = 0;
            char tmp[MAX_INPUT];
            for (size_t i = 0; i < times && n + tl <= MAX_INPUT; i++, n += tl)
                memcpy(tmp + n, t, tl);
            insert(b, len, at, tmp, n);
            break;
        }
        case 9: /* swap the line ending style of one line */
            for (size_t i = at; i < *len; i++) {
                if (b[i] == '\n') {
                    if (i > 0 && b[i - 1] == '\r') {
                        memmove(b + i - 1, b + i, *len - i);
                        (*len)--;
                    } else {
                        insert(b, len, i, "\r", 1);
                    }
                    break;
                }
            }
            break;
        }
    }
}

/* ------------------------------------------------------------ failures */

static const char *cur_input;
static size_t cur_len;

static void fail(const char *what)
{
    fprintf(stderr, "knot_fuzz: invariant failed: %s\ninput (%zu bytes): \"", what, cur_len);
    for (size_t i = 0; i < cur_len && i < 2000; i++) {
        unsigned char c = (unsigned char)cur_input[i];
        if (c == '\\' || c == '"')
            fprintf(stderr, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fprintf(stderr, "\"\n");
    if (save_path) {
        FILE *f = fopen(save_path, "wb");
        if (f) {
            fwrite(cur_input, 1, cur_len, f);
            fclose(f);
        }
    }
    exit(1);
}

#define CHECK(cond, what)      \
    do {                       \
        if (!(cond))           \
            fail(what);        \
    } while (0)

/* ------------------------------------------------------------ models */

/* The head ends after the first LF followed by LF or CR LF. */
static size_t model_head_length(const char *b, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (b[i] != '\n')
            continue;
        if (b[i + 1] == '\n')
            return i + 2;
        if (b[i + 1] == '\r' && i + 2 < len && b[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* path_from_target, written differently: decode, split on '/', resolve on
 * a stack of segments, join. Returns the status; out gets the path. */
static int model_path(const char *target, char *out, size_t outsz, bool *dir_form)
{
    const char *p = target;
    if (!strncasecmp(p, "http://", 7) || !strncasecmp(p, "https://", 8)) {
        p += p[4] == ':' ? 7 : 8;
        while (*p && *p != '/' && *p != '?' && *p != '#')
            p++;
        if (*p != '/')
            p = "/";
    }
    if (*p != '/')
        return 400;
    size_t cap = strlen(p) + 1;
    char *dec = malloc(cap);
    size_t n = 0;
    for (; *p && *p != '?' && *p != '#'; p++) {
        char c = *p;
        if (c == '%') {
            if (hexv(p[1]) < 0 || hexv(p[2]) < 0) {
                free(dec);
                return 400;
            }
            c = (char)(hexv(p[1]) * 16 + hexv(p[2]));
            if (!c) {
                free(dec);
                return 400;
            }
            p += 2;
        }
        if (n + 1 >= outsz) { /* Knot stops at the first byte that does not fit */
            free(dec);
            return 414;
        }
        dec[n++] = c;
    }
    dec[n] = '\0';
    const char **stack = malloc((n + 1) * sizeof *stack);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    size_t depth = 0;
    bool dir = true;
    size_t i = 0;
    while (i < n) {
        i++; /* the '/' */
        size_t s = i;
        while (i < n && dec[i] != '/')
            i++;
        size_t l = i - s;
        if (l == 0 || (l == 1 && dec[s] == '.')) {
            dir = true;
        } else if (l == 2 && dec[s] == '.' && dec[s + 1] == '.') {
            if (depth == 0) {
                free(dec), free(stack), free(lens);
                return 400;
            }
            depth--;
            dir = true;
        } else {
            stack[depth] = dec + s;
            lens[depth++] = l;
            dir = false;
        }
    }
    size_t w = 0;
    for (size_t k = 0; k < depth; k++) {
        if (k)
            out[w++] = '/';
        memcpy(out + w, stack[k], lens[k]);
        w += lens[k];
    }
    out[w] = '\0';
    *dir_form = dir;
    free(dec), free(stack), free(lens);
    return 0;
}

/* A decimal number at s, saturating at INT64_MAX; NULL if none. */
static const char *model_num(const char *s, const char *end, int64_t *out)
{
    if (s == end || !isdigit((unsigned char)*s))
        return NULL;
    unsigned long long v = 0;
    for (; s < end && isdigit((unsigned char)*s); s++) {
        if (v > (unsigned long long)INT64_MAX / 10 + 1) /* once above, stays there */
            v = (unsigned long long)INT64_MAX + 1;
        else
            v = v * 10 + (unsigned long long)(*s - '0'); /* at most ~9.3e18: no wrap */
    }
    *out = v > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)v;
    return s;
}

/* RFC 9110 14.1.2 with Knot's choices: numbers saturate; one range is
 * served; several are ignored (200) unless none is satisfiable (416); an
 * invalid spec means "ignore the Range"; a suffix range of an empty
 * representation too. Returns the kind, bounds of the first satisfiable. */
static enum http_range_kind model_range(const char *v, int64_t size, int64_t *first, int64_t *last)
{
    if (strncasecmp(v, "bytes", 5))
        return RANGE_NONE;
    v += 5;
    v += strspn(v, " \t");
    if (*v++ != '=')
        return RANGE_NONE;
    int specs = 0, ok = 0;
    while (true) {
        const char *s = v, *e = v + strcspn(v, ",");
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        const char *t = e;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (s < t) {
            specs++;
            int64_t a, b;
            if (*s == '-') {
                const char *q = model_num(s + 1, t, &b);
                if (!q || q != t || (b > 0 && size == 0))
                    return RANGE_NONE;
                if (b > 0 && !ok++) {
                    *first = size > b ? size - b : 0;
                    *last = size - 1;
                }
            } else {
                const char *q = model_num(s, t, &a);
                if (!q || q == t || *q != '-')
                    return RANGE_NONE;
                b = INT64_MAX;
                if (q + 1 < t) {
                    const char *r = model_num(q + 1, t, &b);
                    if (!r || r != t || b < a)
                        return RANGE_NONE;
                }
                if (a < size && !ok++) {
                    *first = a;
                    *last = b < size ? b : size - 1;
                }
            }
        }
        if (!*e)
            break;
        v = e + 1;
    }
    if (!specs)
        return RANGE_NONE;
    if (!ok)
        return RANGE_UNSATISFIABLE;
    return specs == 1 ? RANGE_SATISFIABLE : RANGE_NONE;
}

/* ------------------------------------------------------------ checks */

static unsigned signature; /* outcomes of this input, for the pool */

static void check_path(const char *target)
{
    static const size_t sizes[] = { 1, 2, 3, 8, 256, 4096 };
    size_t outsz = sizes[below(sizeof sizes / sizeof *sizes)];
    char *out = malloc(outsz), *want = malloc(outsz);
    bool dir = false, want_dir = false;
    int st = path_from_target(target, out, outsz, &dir);
    int want_st = model_path(target, want, outsz, &want_dir);
    CHECK(st == want_st, "path_from_target status differs from the model");
    signature = signature * 31 + (unsigned)st;
    if (st == 0) {
        size_t n = strnlen(out, outsz);
        CHECK(n < outsz, "normalised path not terminated within its buffer");
        CHECK(!strcmp(out, want), "normalised path differs from the model");
        CHECK(dir == want_dir, "dir_form differs from the model");
        CHECK(out[0] != '/', "normalised path starts with '/'");
        /* Segment by segment: none empty, ".", or "..". */
        for (const char *s = out; *s;) {
            const char *e = strchr(s, '/');
            size_t l = e ? (size_t)(e - s) : strlen(s);
            CHECK(l > 0, "empty segment");
            CHECK(!(l == 1 && s[0] == '.'), "'.' segment");
            CHECK(!(l == 2 && s[0] == '.' && s[1] == '.'), "'..' segment");
            s += l + (e != NULL);
            CHECK(!(e && !*s), "trailing '/'");
        }
    }
    free(out);
    free(want);
}

static void check_range(const char *value)
{
    static const int64_t sizes[] = { 0, 1, 2, 5, 100, 3 * 1024 * 1024 + 17, INT64_MAX - 1, INT64_MAX };
    int64_t size = below(4) ? sizes[below(sizeof sizes / sizeof *sizes)] : (int64_t)below(1000);
    int64_t first = -7, last = -7, mf = -7, ml = -7;
    enum http_range_kind k = http_parse_range(value, size, &first, &last);
    enum http_range_kind m = model_range(value, size, &mf, &ml);
    CHECK(k == m, "Range kind differs from the model");
    signature = signature * 31 + (unsigned)k;
    if (k != RANGE_SATISFIABLE)
        CHECK(first == -7 && last == -7, "Range bounds written without a 206 (the caller uses them)");
    if (k == RANGE_SATISFIABLE) {
        CHECK(0 <= first && first <= last && last < size, "Range outside the representation");
        CHECK(first == mf && last == ml, "Range bounds differ from the model");
    }
}

static void check_date(const char *value)
{
    time_t t;
    if (!httpdate_parse(value, &t))
        return;
    signature = signature * 31 + 1;
    char text[HTTPDATE_LEN + 1];
    httpdate_format(t, text);
    time_t again;
    CHECK(httpdate_parse(text, &again) && again == t, "a parsed date does not round-trip");
}

/* Bytes of the head the parser may have NUL-terminated: compare to the
 * original copy to find what it saw. */
static bool in_block(const char *p, const char *b, size_t n)
{
    return p >= b && p < b + n;
}

static void check_head(const char *orig, size_t len)
{
    /* The head length, scanned at once and in random pieces. */
    char *b = malloc(len ? len : 1);
    memcpy(b, orig, len);
    size_t scanned = 0;
    size_t want = model_head_length(b, len);
    size_t got = http_head_length(b, len, &scanned);
    CHECK(got == want, "http_head_length differs from the model");
    CHECK(scanned <= len, "scanned beyond the buffer");
    scanned = 0;
    size_t have = 0;
    got = 0;
    while (!got && have < len) {
        have += 1 + below(len < 256 ? 8 : len / 4); /* a dozen pieces or so */
        if (have > len)
            have = len;
        char *piece = malloc(have); /* a fresh block of exactly what arrived */
        memcpy(piece, orig, have);
        got = http_head_length(piece, have, &scanned);
        CHECK(scanned <= have, "scanned beyond what arrived");
        free(piece);
    }
    CHECK(got == want, "http_head_length in pieces differs from at once");
    free(b);
    signature = signature * 31 + (want != 0);
    if (!want)
        return;

    /* Parse exactly the head, in a block of its size. */
    char *h = malloc(want);
    memcpy(h, orig, want);
    size_t max_uri = below(2) ? 8192 : below(64);
    struct http_request req;
    int st = http_parse_request(h, want, max_uri, &req);
    signature = signature * 31 + (unsigned)st;
    CHECK(st == 0 || st == 400 || st == 414 || st == 431 || st == 501 || st == 505, "unexpected status");
    if (memchr(orig, '\0', want))
        CHECK(st != 0, "a head with a NUL was accepted");
    for (size_t i = 1; i + 1 < want; i++)
        if (orig[i - 1] == '\n' && (orig[i] == ' ' || orig[i] == '\t'))
            CHECK(st != 0, "a head with obs-fold was accepted");
    if (st == 0) {
        CHECK(req.method_name && in_block(req.method_name, h, want), "method outside the head");
        CHECK(req.target && in_block(req.target, h, want), "target outside the head");
        CHECK(strlen(req.target) <= max_uri, "target over the limit accepted");
        for (const char *c = req.target; *c; c++)
            CHECK((unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f, "target with a control or space");
        CHECK(req.minor >= 0 && req.minor <= 9, "minor version");
        CHECK(req.content_length >= -1, "negative Content-Length");
        CHECK(!(req.chunked && req.content_length >= 0), "Content-Length with chunked accepted");
        CHECK(!(req.minor == 0 && req.chunked), "HTTP/1.0 with Transfer-Encoding accepted");
        if (req.range) {
            CHECK(in_block(req.range, h, want), "Range outside the head");
            check_range(req.range);
        }
        if (req.if_modified_since) {
            CHECK(in_block(req.if_modified_since, h, want), "If-Modified-Since outside the head");
            check_date(req.if_modified_since);
        }
        if (req.if_range) {
            CHECK(in_block(req.if_range, h, want), "If-Range outside the head");
            check_date(req.if_range);
        }
        check_path(req.target);
    }
    free(h);
}

/* The same input, NUL-terminated, straight into the value parsers. */
static void check_values(const char *orig, size_t len)
{
    char *s = malloc(len + 1);
    memcpy(s, orig, len);
    s[len] = '\0';
    size_t skip = below(len + 1); /* start somewhere inside, often at a value */
    const char *colon = memchr(s, ':', len);
    if (colon && below(2))
        skip = (size_t)(colon - s) + 1 + (colon[1] == ' ');
    const char *v = s + skip;
    check_path(v);
    check_range(v);
    check_date(v);
    char *r = strstr(s, "bytes=");
    if (r)
        check_range(r);
    free(s);
}

/* ------------------------------------------------------------ main */

static void one(const char *b, size_t len)
{
    cur_input = b;
    cur_len = len;
    signature = 0;
    check_head(b, len);
    check_values(b, len);
}

#define SIG_BITS (1u << 20)
static unsigned char seen[SIG_BITS / 8];

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long long iters = -1;
    double seconds = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--save") && i + 1 < argc)
            save_path = argv[++i];
        else if (!strcmp(argv[i], "--replay") && i + 1 < argc) {
            FILE *f = fopen(argv[++i], "rb");
            static char buf[MAX_INPUT];
            size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
            if (!f)
                return 2;
            fclose(f);
            rng_state = 1;
            for (int k = 0; k < 64; k++) /* several random buffer sizes */
                one(buf, n);
            printf("knot_fuzz: replay passed\n");
            return 0;
        } else {
            fprintf(stderr, "usage: %s [--seed N] [--iters N] [--seconds S] [--save FILE] [--replay FILE]\n", argv[0]);
            return 2;
        }
    }
    if (iters < 0 && seconds < 0)
        iters = 100000;
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;

    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
        pool_add(seeds[i].s, seeds[i].n);
    for (size_t i = 0; i < npool; i++)
        one(pool[i].bytes, pool[i].len);

    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static char buf[MAX_INPUT];
    long long n = 0;
    for (;; n++) {
        if (iters >= 0 && n >= iters)
            break;
        if (seconds >= 0 && !(n & 255)) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
                break;
        }
        const struct input *in = &pool[below(npool)];
        size_t len = in->len;
        memcpy(buf, in->bytes, len);
        mutate(buf, &len);
        one(buf, len);
        unsigned bit = signature % SIG_BITS;
        if (!(seen[bit / 8] & (1u << (bit % 8)))) {
            seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
            pool_add(buf, len);
        }
    }
    printf("knot_fuzz: %lld inputs, pool %zu, seed %llu: no failure\n", n, npool, (unsigned long long)seed);
    return 0;
}

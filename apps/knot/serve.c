/* SPDX-License-Identifier: MIT */
/*
 * GET and HEAD: from a decoded path to the bytes of a response. Decides
 * file or directory (index, redirect, listing), chooses the cache for small
 * files and sendfile for large ones (their open descriptors cached), and
 * applies If-Modified-Since (304), Range/If-Range (206/416) and HEAD. Cost
 * on a cache hit: one stat to revalidate (none within --cache-check), one
 * writev for head and body; by sendfile: the head sent with MSG_MORE so it
 * leaves with the first of the file's bytes, then sendfile.
 */
#include "serve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "httpdate.h"
#include "knot.h"
#include "listing.h"
#include "mime.h"
#include "path.h"
#include "response.h"

#define IS_DIRECTORY 1 /* serve_file: the path is a directory, nothing sent */

/* What a response sends: cached bytes or a range of an open file. */
struct representation {
    const char *data; /* NULL: use file */
    int file;
    int64_t size;
    time_t mtime;
    const char *mtime_text; /* mtime formatted, or NULL */
    const char *mime;
};

static int errno_status(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
        return 404;
    case EXDEV: /* a symlink out of the root */
    case EACCES:
    case EPERM:
    case ELOOP:
        return 403;
    case EMFILE:
    case ENFILE:
        return 503;
    default:
        return 500;
    }
}

static void send_error(int fd, int status, const struct http_request *req, bool keep, struct served *out)
{
    out->status = status;
    out->failed = response_error(fd, status, req->minor, keep, req->method == HTTP_HEAD, &out->bytes) != 0;
}

/* If-Range holding a date equal to Last-Modified lets the Range apply; an
 * entity tag (Knot sends none) or any other date means "send it all". */
static bool if_range_allows(const struct http_request *req, time_t mtime)
{
    time_t t;
    return !req->if_range || (httpdate_parse(req->if_range, &t) && t == mtime);
}

/* If-None-Match, when present, decides and If-Modified-Since is ignored
 * (RFC 9110 13.1.3). Knot sends no entity tags: only "*", any current
 * representation, matches (13.1.2). */
static bool not_modified(const struct http_request *req, time_t mtime)
{
    time_t since;
    if (req->if_none_match)
        return !strcmp(req->if_none_match, "*");
    return req->if_modified_since && httpdate_parse(req->if_modified_since, &since) &&
           mtime <= since && since <= time(NULL);
}

/* Returns RESPONSE_SHORT if the file ended before the promised length (the
 * connection must close: out->failed is set), else 0. */
static int send_representation(int fd, const struct http_request *req, bool keep,
                               const struct representation *r, struct served *out)
{
    struct response_head h;
    response_head_init(&h, 200, req->minor, keep);
    h.last_modified = r->mtime;
    h.last_modified_text = r->mtime_text;
    h.content_type = r->mime;
    h.accept_ranges = true;
    int64_t first = 0, last = r->size - 1;
    if (not_modified(req, r->mtime)) {
        h.status = 304;
        h.content_type = NULL;
    } else if (req->range && req->method == HTTP_GET && if_range_allows(req, r->mtime)) {
        switch (http_parse_range(req->range, r->size, &first, &last)) {
        case RANGE_SATISFIABLE:
            h.status = 206;
            h.range_first = first;
            h.range_last = last;
            h.range_total = r->size;
            break;
        case RANGE_UNSATISFIABLE:
            h.status = 416;
            h.range_first = -1;
            h.range_total = r->size;
            h.content_type = NULL;
            first = 0, last = -1;
            break;
        case RANGE_NONE:
            break;
        }
    }
    size_t len = (size_t)(last - first + 1);
    if (h.status != 304)
        h.content_length = (int64_t)len;
    if (h.status == 304 || req->method == HTTP_HEAD)
        len = 0;

    /* At most ~350 bytes: status, Date, the longest MIME type, three
     * 20-digit numbers of Content-Range. Kept small: with every frame of a
     * request within one page of its thread's stack, thousands of threads
     * cost the TLB one page each. */
    char head[512];
    size_t hlen = response_format(head, sizeof head, &h);
    out->status = h.status;
    if (!hlen) { /* cannot happen; never send a body without its head */
        out->failed = true;
        return 0;
    }
    int rc;
    if (r->data) {
        struct iovec iov[2] = { { head, hlen }, { (char *)r->data + first, len } };
        rc = writev_full(fd, iov, len ? 2 : 1);
    } else {
        rc = send_full(fd, head, hlen, len ? MSG_MORE : 0);
        if (!rc && len)
            rc = knot_config.no_sendfile ? copy_full(fd, r->file, (off_t)first, len)
                                         : sendfile_full(fd, r->file, (off_t)first, len);
    }
    out->failed = rc != 0;
    if (!out->failed)
        out->bytes += (long long)len;
    return rc == RESPONSE_SHORT ? RESPONSE_SHORT : 0;
}

/* A file that ended before the length its response promised: said once
 * here, as nginx's "file was truncated"; the connection then closes, so
 * the client sees a body shorter than its Content-Length. */
static void report_short(const char *rel)
{
    fprintf(stderr, "knot: /%s: file was truncated while being sent\n", rel);
}

/* Sends a cached entry (bytes or descriptor) and releases it. */
static void send_entry(int fd, const struct http_request *req, bool keep, struct cache_entry *e,
                       struct served *out)
{
    struct representation r = { e->data, e->file, (int64_t)e->size, e->mtime, e->last_modified, e->mime };
    if (send_representation(fd, req, keep, &r, out) == RESPONSE_SHORT) {
        report_short(e->key);
        cache_forget(e); /* else served short again until --cache-check expires */
    }
    cache_release(e);
}

/* Reads a whole small file; returns a malloc'd buffer or NULL. */
static char *read_whole(int file, size_t size, size_t *got)
{
    char *data = malloc(size ? size : 1);
    size_t n = 0;
    while (data && n < size) {
        ssize_t r = read(file, data + n, size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(data);
            return NULL;
        }
        if (r == 0)
            break; /* shrank meanwhile: the size check in cache_insert notices */
        n += (size_t)r;
    }
    *got = n;
    return data;
}

/* Serves rel if it is a regular file. *pre is the caller's path_stat of
 * rel (NULL: it failed), so a cache hit costs that one stat and nothing
 * else. Returns 0 when a response was sent, IS_DIRECTORY, or an error
 * status for the caller to send. */
static int serve_file(int fd, const char *rel, const struct stat *pre, const struct http_request *req,
                      bool keep, struct served *out)
{
    struct stat st;
    if (pre)
        st = *pre;
    if (pre && S_ISREG(pre->st_mode) && knot_config.cache_bytes) {
        struct cache_entry *e = cache_lookup(rel, &st);
        if (e) {
            send_entry(fd, req, keep, e, out);
            return 0;
        }
    }

    int file = path_open(rel);
    if (file < 0) {
        if (!pre && knot_config.cache_bytes)
            cache_drop(rel); /* deleted: do not keep its bytes or descriptor */
        return errno_status(-file);
    }
    if (fstat(file, &st)) {
        close(file);
        return 500;
    }
    if (!S_ISREG(st.st_mode)) {
        close(file);
        return S_ISDIR(st.st_mode) ? IS_DIRECTORY : 403;
    }
    if ((size_t)st.st_size < knot_config.sendfile_min) {
        size_t got;
        char *data = read_whole(file, (size_t)st.st_size, &got);
        close(file);
        struct cache_entry *e = data ? cache_insert(rel, &st, data, got) : NULL;
        if (!e)
            return 500;
        send_entry(fd, req, keep, e, out);
        return 0;
    }
    if (knot_config.cache_bytes) { /* the descriptor is kept for later hits */
        struct cache_entry *e = cache_insert_file(rel, &st, file);
        if (!e)
            return 500;
        send_entry(fd, req, keep, e, out);
        return 0;
    }
    struct representation r = { NULL, file, (int64_t)st.st_size, st.st_mtim.tv_sec, NULL, mime_type(rel) };
    if (send_representation(fd, req, keep, &r, out) == RESPONSE_SHORT)
        report_short(rel);
    close(file);
    return 0;
}

/* "/dir" without the slash: redirect so relative links in the index work.
 * Location is the normalised path rel, percent-encoded, plus '/' and the
 * request's query if any. Not the target as sent: "//host/../dir" or
 * "/\host/../dir" would be a Location on another host (an open redirect). */
static void redirect_to_slash(int fd, const char *rel, const struct http_request *req, bool keep,
                              struct served *out)
{
    static const char hex[] = "0123456789ABCDEF";
    const char *t = req->target;
    if (*t != '/') { /* absolute form: drop scheme and authority */
        t = strchr(t, ':') + 3;
        t += strcspn(t, "/?#");
    }
    size_t plen = strcspn(t, "?#");
    const char *query = t[plen] == '?' ? t + plen : "";
    size_t qlen = strcspn(query, "#");
    char *loc = malloc(3 * strlen(rel) + qlen + 3);
    if (!loc) {
        send_error(fd, 500, req, keep, out);
        return;
    }
    size_t n = 0;
    loc[n++] = '/';
    for (const char *r = rel; *r; r++) {
        unsigned char c = (unsigned char)*r;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~/", c)) {
            loc[n++] = (char)c;
        } else {
            loc[n++] = '%';
            loc[n++] = hex[c >> 4];
            loc[n++] = hex[c & 15];
        }
    }
    loc[n++] = '/';
    memcpy(loc + n, query, qlen);
    n += qlen;
    loc[n] = '\0';

    static const char body[] = "<!DOCTYPE html>\n<html><body>Moved.</body></html>\n";
    struct response_head h;
    response_head_init(&h, 301, req->minor, keep);
    h.location = loc;
    h.content_type = "text/html; charset=utf-8";
    h.content_length = sizeof body - 1;
    size_t cap = n + 512;
    char *head = malloc(cap);
    size_t hlen = head ? response_format(head, cap, &h) : 0;
    free(loc);
    if (!hlen) {
        free(head);
        send_error(fd, 500, req, keep, out);
        return;
    }
    bool body_too = req->method != HTTP_HEAD;
    struct iovec iov[2] = { { head, hlen }, { (char *)body, sizeof body - 1 } };
    out->status = 301;
    out->failed = writev_full(fd, iov, body_too ? 2 : 1) != 0;
    if (!out->failed && body_too)
        out->bytes += (long long)(sizeof body - 1);
    free(head);
}

static void serve_directory(int fd, const char *rel, bool dir_form, const struct http_request *req,
                            bool keep, struct served *out)
{
    if (!dir_form) {
        int d = path_open(rel); /* only reveal directories inside the root */
        if (d < 0) {
            send_error(fd, errno_status(-d), req, keep, out);
            return;
        }
        close(d);
        redirect_to_slash(fd, rel, req, keep, out);
        return;
    }
    if (*rel) { /* the directory itself must be inside the root */
        int d = path_open(rel);
        if (d < 0) {
            send_error(fd, errno_status(-d), req, keep, out);
            return;
        }
        close(d);
    }
    char index[PATH_MAX];
    if ((size_t)snprintf(index, sizeof index, "%s%s%s", rel, *rel ? "/" : "",
                         knot_config.index_name) >= sizeof index) {
        send_error(fd, 414, req, keep, out);
        return;
    }
    struct stat st;
    int status = serve_file(fd, index, path_stat(index, &st) == 0 ? &st : NULL, req, keep, out);
    if (status == 0)
        return;
    if (status == 404 || status == IS_DIRECTORY) {
        if (knot_config.listing)
            status = listing_send(fd, rel, req, keep, out);
        else
            status = 403;
        if (status == 0)
            return;
    }
    send_error(fd, status, req, keep, out);
}

void serve_generated(int fd, const struct http_request *req, bool keep_alive, const char *body,
                     size_t len, struct served *out)
{
    struct representation r = { body, -1, (int64_t)len, time(NULL), NULL, "text/html; charset=utf-8" };
    struct http_request plain = *req;
    plain.if_modified_since = plain.range = NULL; /* generated anew each time */
    send_representation(fd, &plain, keep_alive, &r, out);
}

/* Serves the decoded path rel (see path_from_target). */
static void serve_path(int fd, const char *rel, bool dir_form, const struct http_request *req,
                       bool keep_alive, struct served *out)
{
    if (knot_config.cache_check_ms && knot_config.cache_bytes && *rel && !dir_form) {
        struct cache_entry *e = cache_lookup_recent(rel, knot_config.cache_check_ms);
        if (e) { /* checked by a stat less than --cache-check ago */
            send_entry(fd, req, keep_alive, e, out);
            return;
        }
    }
    struct stat st;
    bool known = *rel && path_stat(rel, &st) == 0;
    if (!*rel || (known && S_ISDIR(st.st_mode))) {
        serve_directory(fd, rel, dir_form, req, keep_alive, out);
        return;
    }
    if (dir_form) { /* "file/": a file is not a directory */
        /* The stat above follows symlinks anywhere: answer as the
         * confined open does, or 403/404 tells what exists outside. */
        int f = path_open(rel);
        int status = f >= 0 ? 404 : errno_status(-f);
        if (f >= 0)
            close(f);
        send_error(fd, status == 500 ? 404 : status, req, keep_alive, out);
        return;
    }
    int status = serve_file(fd, rel, known ? &st : NULL, req, keep_alive, out);
    if (status == IS_DIRECTORY) /* became a directory since the stat */
        serve_directory(fd, rel, false, req, keep_alive, out);
    else if (status)
        send_error(fd, status, req, keep_alive, out);
}

/* A path that does not fit serve_request's buffer: decoded again into one
 * of PATH_MAX bytes, on the heap. */
static void serve_long_path(int fd, const struct http_request *req, bool keep_alive, struct served *out)
{
    char *rel = malloc(PATH_MAX);
    if (!rel) {
        send_error(fd, 500, req, keep_alive, out);
        return;
    }
    bool dir_form;
    int status = path_from_target(req->target, rel, PATH_MAX, &dir_form);
    if (status)
        send_error(fd, status, req, keep_alive, out);
    else
        serve_path(fd, rel, dir_form, req, keep_alive, out);
    free(rel);
}

/* The decoded path goes in a small buffer on the stack, not one of
 * PATH_MAX: every connection thread runs this once per request, and a 4 KiB
 * array here spread each request's stack frames over one more page (with
 * 1,000 threads, their stacks' hot pages outnumber what the TLB holds). */
enum { SHORT_PATH = 256 };

void serve_request(int fd, const struct http_request *req, bool keep_alive, struct served *out)
{
    char rel[SHORT_PATH];
    bool dir_form;
    int status = path_from_target(req->target, rel, sizeof rel, &dir_form);
    if (status == 414)
        serve_long_path(fd, req, keep_alive, out);
    else if (status)
        send_error(fd, status, req, keep_alive, out);
    else
        serve_path(fd, rel, dir_form, req, keep_alive, out);
}

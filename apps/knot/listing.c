/* SPDX-License-Identifier: MIT */
/*
 * An HTML page listing a directory, generated on each request (never
 * cached), sorted by name, directories marked with a trailing '/'. The
 * directory is opened through path_open, so the root confinement applies.
 * Names are HTML-escaped in text and percent-encoded in links: a file name
 * cannot inject markup. Hidden entries (leading '.') are not shown.
 */
#include "listing.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

/* A growable string; `failed` sticks after an allocation failure. */
struct sb {
    char *p;
    size_t len, cap;
    bool failed;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap : 4096);
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(struct sb *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_html(struct sb *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sb_str(b, "&lt;"); break;
        case '>': sb_str(b, "&gt;"); break;
        case '&': sb_str(b, "&amp;"); break;
        case '"': sb_str(b, "&quot;"); break;
        case '\'': sb_str(b, "&#39;"); break;
        default: sb_add(b, s, 1);
        }
    }
}

static void sb_url(struct sb *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~", c)) {
            sb_add(b, s, 1);
        } else {
            char e[3] = { '%', hex[c >> 4], hex[c & 15] };
            sb_add(b, e, 3);
        }
    }
}

struct item {
    char *name;
    bool dir;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->name, ((const struct item *)b)->name);
}

int listing_send(int fd, const char *rel, const struct http_request *req, bool keep_alive,
                 struct served *out)
{
    int dfd = path_open(rel);
    if (dfd < 0)
        return dfd == -EXDEV ? 403 : 404;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 500;
    }
    struct item *items = NULL;
    size_t n = 0, cap = 0;
    int status = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct item *more = realloc(items, cap * sizeof *items);
            if (!more) {
                status = 500;
                break;
            }
            items = more;
        }
        struct stat st;
        items[n].dir = fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
        items[n].name = strdup(de->d_name);
        if (!items[n].name) {
            status = 500;
            break;
        }
        n++;
    }
    closedir(d);
    if (!status) {
        qsort(items, n, sizeof *items, by_name);
        struct sb b = { 0 };
        sb_str(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of /");
        sb_html(&b, rel);
        sb_str(&b, "</title></head>\n<body><h1>Index of /");
        sb_html(&b, rel);
        sb_str(&b, "</h1>\n<ul>\n");
        if (*rel)
            sb_str(&b, "<li><a href=\"../\">../</a></li>\n");
        for (size_t i = 0; i < n; i++) {
            sb_str(&b, "<li><a href=\"");
            sb_url(&b, items[i].name);
            sb_str(&b, items[i].dir ? "/\">" : "\">");
            sb_html(&b, items[i].name);
            sb_str(&b, items[i].dir ? "/</a></li>\n" : "</a></li>\n");
        }
        sb_str(&b, "</ul>\n</body></html>\n");
        if (b.failed)
            status = 500;
        else
            serve_generated(fd, req, keep_alive, b.p, b.len, out);
        free(b.p);
    }
    for (size_t i = 0; i < n; i++)
        free(items[i].name);
    free(items);
    return status;
}

/* SPDX-License-Identifier: MIT */
/*
 * The command line: one table lists every option with its kind, bounds,
 * default and help line; parsing, validation and --help all read it, so an
 * option cannot be documented without existing or exist undocumented.
 * Accepts "--name value" and "--name=value". Every error names the option
 * and the value it got.
 */
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "knot.h"

struct knot_config knot_config = {
    .addr = "0.0.0.0",
    .port = 8080,
    .backlog = 4096,
    .max_conn = 10000,
    .stack_bytes = 64 * 1024,
    .cache_bytes = (size_t)64 << 20,
    .sendfile_min = 16 * 1024,
    .max_header_bytes = 8192,
    .max_uri_bytes = 4096,
    .max_body_bytes = 1 << 20,
    .header_timeout_ms = 10000,
    .keepalive_timeout_ms = 15000,
    .send_timeout_ms = 30000,
    .min_send_rate = 256,
    .index_name = "index.html",
};

enum kind {
    K_STRING,  /* const char * */
    K_INT,     /* int in [min, max] */
    K_SIZE,    /* size_t: value in [min, max] times unit bytes */
    K_SECONDS, /* int milliseconds from a decimal number of seconds */
    K_FLAG,    /* bool, takes no value */
};

struct option {
    const char *name;
    enum kind kind;
    void *dst;
    long long min, max, unit;
    const char *meta, *help;
};

#define C (&knot_config)
static const struct option options[] = {
    { "port", K_INT, &C->port, 0, 65535, 1, "P", "TCP port; 0 picks a free one (default 8080)" },
    { "addr", K_STRING, &C->addr, 0, 0, 0, "ADDR", "listen address (default 0.0.0.0)" },
    { "root", K_STRING, &C->root, 0, 0, 0, "DIR", "document root (required)" },
    { "index", K_STRING, &C->index_name, 0, 0, 0, "NAME", "directory index file (default index.html)" },
    { "cache-mb", K_SIZE, &C->cache_bytes, 0, 1 << 20, 1 << 20, "N", "file cache size in MiB, 0 disables (default 64)" },
    { "cache-check", K_SECONDS, &C->cache_check_ms, 0, 3600000, 0, "SEC", "serve a cached file for SEC after its last check without a stat; edits show after at most SEC (default 0: check every request)" },
    { "sendfile-kb", K_SIZE, &C->sendfile_min, 1, 1 << 20, 1024, "N", "files of N KiB or more go by sendfile, their descriptors cached (default 16)" },
    { "no-sendfile", K_FLAG, &C->no_sendfile, 0, 0, 0, NULL, "send those files by read and write (a copy) instead: slower, but a file truncated while sent never puts zeros on the wire" },
    { "max-conn", K_INT, &C->max_conn, 1, 1 << 20, 1, "N", "connections served at once; more get 503 (default 10000)" },
    { "backlog", K_INT, &C->backlog, 1, 1 << 20, 1, "N", "listen backlog (default 4096)" },
    { "stack-kb", K_SIZE, &C->stack_bytes, 16, 1 << 20, 1024, "N", "stack of each connection thread in KiB (default 64)" },
    { "header-timeout", K_SECONDS, &C->header_timeout_ms, 1, 3600000, 0, "SEC", "a request head must arrive within SEC (default 10)" },
    { "keepalive-timeout", K_SECONDS, &C->keepalive_timeout_ms, 1, 3600000, 0, "SEC", "idle keep-alive connections close after SEC (default 15)" },
    { "send-timeout", K_SECONDS, &C->send_timeout_ms, 1, 3600000, 0, "SEC", "a response write blocked for SEC closes the connection (default 30)" },
    { "min-send-rate", K_INT, &C->min_send_rate, 0, 1 << 30, 1, "N", "a response sending under N bytes/s over a --send-timeout period closes the connection; 0 disables (default 256)" },
    { "max-header-bytes", K_SIZE, &C->max_header_bytes, 256, 1 << 20, 1, "N", "request line + headers limit, else 431 (default 8192)" },
    { "max-uri-bytes", K_SIZE, &C->max_uri_bytes, 16, 1 << 20, 1, "N", "request target limit, else 414 (default 4096)" },
    { "max-body-bytes", K_SIZE, &C->max_body_bytes, 0, 1LL << 40, 1, "N", "request body limit, else 413 (default 1048576)" },
    { "listing", K_FLAG, &C->listing, 0, 0, 0, NULL, "list directories that have no index file" },
    { "follow-symlinks", K_FLAG, &C->follow_symlinks, 0, 0, 0, NULL, "serve symlinks that point outside the root" },
    { "access-log", K_STRING, &C->access_log, 0, 0, 0, "FILE", "append a buffered access log (Common Log Format) to FILE" },
};
#undef C
#define NOPTIONS (sizeof options / sizeof options[0])

void args_usage(FILE *out)
{
    fprintf(out, "usage: knot --root DIR [options]\n\n"
                 "Knot: a thread-per-connection HTTP/1.1 static file server.\n\n");
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        char left[40];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
        fprintf(out, "  %-26s %s\n", left, o->help);
    }
    fprintf(out, "  %-26s %s\n", "-h, --help", "print this help and exit");
    fprintf(out, "\nSIGINT or SIGTERM: stop accepting, finish responses in flight, exit 0.\n");
}

static bool parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

static bool set_value(const struct option *o, const char *val)
{
    long long v;
    switch (o->kind) {
    case K_STRING:
        if (!*val) {
            fprintf(stderr, "knot: --%s needs a non-empty value\n", o->name);
            return false;
        }
        *(const char **)o->dst = val;
        return true;
    case K_INT:
    case K_SIZE:
        if (!parse_ll(val, &v) || v < o->min || v > o->max) {
            fprintf(stderr, "knot: --%s expects an integer in %lld..%lld, got '%s'\n",
                    o->name, o->min, o->max, val);
            return false;
        }
        if (o->kind == K_INT)
            *(int *)o->dst = (int)v;
        else
            *(size_t *)o->dst = (size_t)v * (size_t)o->unit;
        return true;
    case K_SECONDS: {
        char *end;
        errno = 0;
        double sec = strtod(val, &end);
        double ms = sec * 1000.0;
        if (errno || end == val || *end || !isfinite(sec) || ms < o->min || ms > o->max) {
            fprintf(stderr, "knot: --%s expects seconds in %.3g..%.3g, got '%s'\n",
                    o->name, o->min / 1000.0, o->max / 1000.0, val);
            return false;
        }
        *(int *)o->dst = (int)ms;
        return true;
    }
    case K_FLAG:
        break;
    }
    return false;
}

static const struct option *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strlen(options[i].name) == len && !memcmp(options[i].name, name, len))
            return &options[i];
    return NULL;
}

enum args_result args_parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            args_usage(stdout);
            return ARGS_HELP;
        }
        if (strncmp(arg, "--", 2) || !arg[2]) {
            fprintf(stderr, "knot: unexpected argument '%s' (see --help)\n", arg);
            return ARGS_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        const struct option *o = find_option(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!o) {
            fprintf(stderr, "knot: unknown option '%s' (see --help)\n", arg);
            return ARGS_ERROR;
        }
        if (o->kind == K_FLAG) {
            if (eq) {
                fprintf(stderr, "knot: --%s takes no value\n", o->name);
                return ARGS_ERROR;
            }
            *(bool *)o->dst = true;
            continue;
        }
        const char *val = eq ? eq + 1 : NULL;
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "knot: --%s needs a value (--%s %s)\n", o->name, o->name, o->meta);
                return ARGS_ERROR;
            }
            val = argv[++i];
        }
        if (!set_value(o, val))
            return ARGS_ERROR;
    }

    struct knot_config *c = &knot_config;
    struct stat st;
    if (!c->root) {
        fprintf(stderr, "knot: --root DIR is required (see --help)\n");
        return ARGS_ERROR;
    }
    if (stat(c->root, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "knot: --root '%s' is not a directory\n", c->root);
        return ARGS_ERROR;
    }
    if (strchr(c->index_name, '/') || !strcmp(c->index_name, ".") || !strcmp(c->index_name, "..")) {
        fprintf(stderr, "knot: --index '%s' must be a plain file name\n", c->index_name);
        return ARGS_ERROR;
    }
    if (c->max_uri_bytes >= c->max_header_bytes) {
        fprintf(stderr, "knot: --max-uri-bytes (%zu) must be below --max-header-bytes (%zu)\n",
                c->max_uri_bytes, c->max_header_bytes);
        return ARGS_ERROR;
    }
    return ARGS_OK;
}

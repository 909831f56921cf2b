/* SPDX-License-Identifier: MIT */
/*
 * Knot's configuration: one struct, filled by args.c from the command line
 * before any thread starts and read-only afterwards, so every module may read
 * it without a lock.
 *
 * Knot is a thread-per-connection static file server written in plain POSIX
 * threaded C. It never calls the Capriccio API: the same sources build into
 * knot-pthreads (NPTL) and knot (pthread names renamed onto Capriccio by
 * -include capriccio/pthread.h; blocking calls intercepted by the library).
 * The calls it makes on sockets are accept, read (bounded by SO_RCVTIMEO),
 * write, writev, sendfile, poll (lingering close only), shutdown and close;
 * a thread blocks in them and nowhere else.
 */
#ifndef KNOT_H
#define KNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct knot_config {
    const char *root;          /* document root, as given */
    const char *addr;          /* listen address (IPv4 or IPv6 literal) */
    int port;                  /* 0: any free port (printed when ready) */
    int backlog;
    int max_conn;              /* connections served at once; more get 503 */
    size_t stack_bytes;        /* stack of each connection thread */
    size_t cache_bytes;        /* file cache bound; 0 disables the cache */
    int cache_check_ms;        /* a cached file is served this long after its
                                  last stat without another; 0: stat each time */
    size_t sendfile_min;       /* files this big or bigger go by sendfile */
    size_t max_header_bytes;   /* request line + headers */
    size_t max_uri_bytes;      /* request target */
    size_t max_body_bytes;     /* request body (read and discarded) */
    int header_timeout_ms;     /* whole request head must arrive in this */
    int keepalive_timeout_ms;  /* idle wait for the next request */
    int send_timeout_ms;       /* a blocked response write gives up after */
    int min_send_rate;         /* bytes/s a response must make over each
                                  send_timeout_ms; 0: no minimum */
    bool no_sendfile;          /* copy large files (pread, send) instead */
    const char *index_name;    /* served for a directory URL */
    bool listing;              /* list directories that have no index */
    bool follow_symlinks;      /* allow symlinks that leave the root */
    const char *access_log;    /* NULL: no access log */
};

extern struct knot_config knot_config;

/* The monotonic clock in milliseconds: every timeout in Knot is measured
 * on it. The coarse clock (the kernel's tick, a few ms at most behind) is
 * plenty for deadlines of seconds and is read from memory, without the
 * time-stamp counter: a request reads it about three times, and the precise
 * clock was about 1.5% of Knot's CPU time per request (perf, 1,000
 * connections). */
static inline long long knot_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The receive timeout every connection starts with (conn.c): no longer
 * than either deadline a read may be waiting for. */
static inline long long knot_read_wait_ms(void)
{
    return knot_config.header_timeout_ms < knot_config.keepalive_timeout_ms
               ? knot_config.header_timeout_ms
               : knot_config.keepalive_timeout_ms;
}

#endif /* KNOT_H */

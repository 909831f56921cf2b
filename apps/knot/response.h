/* SPDX-License-Identifier: MIT */
/* Writing responses: status lines, header blocks, bodies, see response.c. */
#ifndef KNOT_RESPONSE_H
#define KNOT_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

/* What goes into a response head besides Date and Server. */
struct response_head {
    int status;
    int minor;                /* the request's HTTP/1.<minor> */
    bool keep_alive;          /* false: Connection: close */
    const char *content_type; /* NULL: none */
    int64_t content_length;   /* -1: none */
    time_t last_modified;     /* -1: none */
    const char *last_modified_text; /* its IMF-fixdate if known, else NULL */
    bool accept_ranges;
    int64_t range_first, range_last, range_total; /* Content-Range if total >= 0;
                                                   * first < 0 means "bytes * /total" */
    const char *location;     /* 301 */
};

/* An empty head: content_length, last_modified and range_total are -1. */
void response_head_init(struct response_head *h, int status, int minor, bool keep_alive);

/* Formats h into buf; returns the length, or 0 if cap is too small. */
size_t response_format(char *buf, size_t cap, const struct response_head *h);

const char *response_reason(int status);

/* Whole-buffer writes on a blocking socket. Return 0, or -1 when the peer is
 * gone or the send timeout (SO_SNDTIMEO) expired. send_full passes flags to
 * send(): MSG_MORE holds a head back to leave in one packet with the start
 * of the body that follows (TCP_NODELAY would otherwise push it alone). */
int send_full(int fd, const void *buf, size_t len, int flags);
int writev_full(int fd, struct iovec *iov, int iovcnt);
int sendfile_full(int sock, int file, off_t offset, size_t len);

/* Sends a small HTML page for an error status (with Allow on 405 and
 * Retry-After on 503). Adds the body length to *bytes. Returns 0 or -1. */
int response_error(int fd, int status, int minor, bool keep_alive, bool head_only, long long *bytes);

/* Closes a connection after its last response without losing that
 * response: shuts down the sending side, then reads and discards what the
 * client still sends (up to a bound, for at most a second), so that the
 * kernel does not answer unread input with a reset that would destroy the
 * response in the client's buffers. */
void lingering_close(int fd);

#endif /* KNOT_RESPONSE_H */

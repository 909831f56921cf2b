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
 * gone, the send timeout (SO_SNDTIMEO) expired or the response fell below
 * --min-send-rate over a --send-timeout period; after those two the socket
 * is reset when closed (SO_LINGER 0). send_full passes flags to send():
 * MSG_MORE holds a head back to leave in one packet with the start of the
 * body that follows (TCP_NODELAY would otherwise push it alone). */
int send_full(int fd, const void *buf, size_t len, int flags);
int writev_full(int fd, struct iovec *iov, int iovcnt);

/* len bytes of file from offset, by sendfile, or by copy_full through a
 * buffer (pread and send): 0, -1 as above, or RESPONSE_SHORT when the file
 * ends first (truncated meanwhile), having sent only the file's bytes.
 * sendfile hands the kernel the file's pages, not copies: a truncation
 * zeroes the part of the page (folio) holding the cut even where a socket
 * still holds it, so bytes queued but not yet delivered can reach the
 * client as zeros. A copy cannot change once queued. */
enum { RESPONSE_SHORT = -2 };
int sendfile_full(int sock, int file, off_t offset, size_t len);
int copy_full(int sock, int file, off_t offset, size_t len);

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

/* SPDX-License-Identifier: MIT */
/* Request bodies, read and thrown away, see body.c. */
#ifndef KNOT_BODY_H
#define KNOT_BODY_H

#include <stddef.h>

#include "conn.h"
#include "http.h"

/* Room the connection buffer keeps after the largest head, for body.c to
 * parse chunked coding in (its lines must fit). */
#define BODY_WINDOW 1024

/* Discards the body of req, whose head occupies c->buf[0..head). On 0,
 * *next is where the next request starts in c->buf. Otherwise returns the
 * status to answer before closing (400 malformed chunking, 413 over
 * --max-body-bytes) or -1 when the connection failed or timed out. The head
 * bytes are left untouched. */
int body_discard(struct conn *c, size_t head, const struct http_request *req, size_t *next);

#endif /* KNOT_BODY_H */

/* SPDX-License-Identifier: MIT */
/* Directory listings (only with --listing), see listing.c. */
#ifndef KNOT_LISTING_H
#define KNOT_LISTING_H

#include <stdbool.h>

#include "http.h"
#include "serve.h"

/* Sends an HTML index of directory rel. Returns 0 when a response was sent,
 * or an error status for the caller to send. */
int listing_send(int fd, const char *rel, const struct http_request *req, bool keep_alive,
                 struct served *out);

#endif /* KNOT_LISTING_H */

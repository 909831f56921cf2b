/* SPDX-License-Identifier: MIT */
/* Answering GET and HEAD from the document root, see serve.c. */
#ifndef KNOT_SERVE_H
#define KNOT_SERVE_H

#include <stdbool.h>

#include "http.h"

/* The outcome of one response, for the access log and the connection. */
struct served {
    int status;
    long long bytes;  /* body bytes sent */
    bool failed;      /* the write failed: close without another word */
};

/* Writes the whole response to req (GET or HEAD) on fd. */
void serve_request(int fd, const struct http_request *req, bool keep_alive, struct served *out);

/* Sends a generated body (directory listings) as a 200 text/html. */
void serve_generated(int fd, const struct http_request *req, bool keep_alive, const char *body,
                     size_t len, struct served *out);

#endif /* KNOT_SERVE_H */

/* SPDX-License-Identifier: MIT */
/* Content-Type from a file name's extension, see mime.c. */
#ifndef KNOT_MIME_H
#define KNOT_MIME_H

/* A static string; application/octet-stream for unknown extensions. */
const char *mime_type(const char *path);

#endif /* KNOT_MIME_H */

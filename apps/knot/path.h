/* SPDX-License-Identifier: MIT */
/* From request target to an open file inside the document root, see path.c. */
#ifndef KNOT_PATH_H
#define KNOT_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Opens the document root. Returns 0 or -errno. */
int path_init(const char *root);

/* Decodes the path of a request target (origin or absolute form) into a
 * normalised path relative to the root: no leading '/', no empty, "." or
 * ".." segments; "" is the root itself. *dir_form says the URL named a
 * directory (it ended in '/', "/." or "/.."). Returns 0, 400 (bad
 * escape, NUL, a ".." above the root, not a path) or 414 (too long). */
int path_from_target(const char *target, char *out, size_t outsz, bool *dir_form);

/* stat() of rel, following symlinks anywhere. Only ever used to check that a
 * file already opened through path_open is unchanged; never to decide
 * that a path is allowed. Returns 0 or -errno. */
int path_stat(const char *rel, struct stat *st);

/* Opens rel for reading, confined to the root: a symlink that resolves
 * outside it fails with -EXDEV unless --follow-symlinks. Returns an fd or
 * -errno. */
int path_open(const char *rel);

#endif /* KNOT_PATH_H */

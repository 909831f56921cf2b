/* SPDX-License-Identifier: MIT */
/* Command-line parsing into knot_config (see args.c). */
#ifndef KNOT_ARGS_H
#define KNOT_ARGS_H

#include <stdio.h>

enum args_result { ARGS_OK, ARGS_HELP, ARGS_ERROR };

/* Fills knot_config from argv. On ARGS_ERROR a one-line reason has been
 * printed to stderr; on ARGS_HELP the usage has been printed to stdout. */
enum args_result args_parse(int argc, char **argv);
void args_usage(FILE *out);

#endif /* KNOT_ARGS_H */

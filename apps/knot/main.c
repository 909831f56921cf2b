/* SPDX-License-Identifier: MIT */
/*
 * Knot's entry point: parse the command line, open the document root, the
 * cache and the access log, then hand over to the server. Exit status: 0
 * after --help or a graceful shutdown, 1 if the server cannot start, 2 for
 * a bad command line.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cache.h"
#include "knot.h"
#include "log.h"
#include "path.h"
#include "server.h"

int main(int argc, char **argv)
{
    switch (args_parse(argc, argv)) {
    case ARGS_HELP:
        return 0;
    case ARGS_ERROR:
        return 2;
    case ARGS_OK:
        break;
    }
    int err = path_init(knot_config.root);
    if (err) {
        fprintf(stderr, "knot: cannot open --root '%s': %s\n", knot_config.root, strerror(-err));
        return 1;
    }
    cache_init(knot_config.cache_bytes);
    err = log_open(knot_config.access_log);
    if (err) {
        fprintf(stderr, "knot: cannot open --access-log '%s': %s\n", knot_config.access_log,
                strerror(-err));
        return 1;
    }
    return server_run();
}

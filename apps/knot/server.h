/* SPDX-License-Identifier: MIT */
/* The listening socket, the connection registry and shutdown, see server.c. */
#ifndef KNOT_SERVER_H
#define KNOT_SERVER_H

#include <stdbool.h>

#include "conn.h"

/* Listens, prints the ready line, serves until SIGINT/SIGTERM, waits for
 * the responses in flight. Returns the process exit status. */
int server_run(void);

/* True once shutdown has begun. */
bool server_stopping(void);

/* A connection is about to wait for its next request: from now on shutdown
 * may cut its input. Returns false if shutdown has already begun. */
bool server_conn_idle(struct conn *c);
/* A connection is answering (or closing): shutdown leaves it alone. */
void server_conn_busy(struct conn *c);

#endif /* KNOT_SERVER_H */

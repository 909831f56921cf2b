/* SPDX-License-Identifier: MIT */
/* One client connection and the thread that serves it, see conn.c. */
#ifndef KNOT_CONN_H
#define KNOT_CONN_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <arpa/inet.h>

/* One allocation holds the struct and its input buffer (data[]): a request
 * touches the struct's hot fields and the first lines of the buffer, and at
 * 10,000 connections every such line is cold. Together they are one run
 * of lines on one page instead of lines on two pages of two heap chunks
 * (server.c conn_new). The cold fields come first. */
struct conn {
    /* Owned by server.c: the list under its registry lock. */
    struct conn *prev, *next;
    char peer[INET6_ADDRSTRLEN];
    /* Hot: read on every request. */
    int fd;
    _Atomic int state; /* an enum conn_state, for graceful shutdown (server.c) */
    long long read_wait_ms; /* the socket's SO_RCVTIMEO, see conn.c */
    /* Input: buf[0..len) holds received bytes not yet consumed; buf is
     * data, cap bytes (conn_buffer_bytes()). */
    char *buf;
    size_t len, cap;
    char data[];
};

/* BUSY: a request is being answered, shutdown must not cut it; IDLE:
 * waiting for one; CUTTING: shutdown is cutting its input. */
enum conn_state { CONN_BUSY, CONN_IDLE, CONN_CUTTING };

/* The input buffer of every connection: max_header_bytes for the head
 * plus BODY_WINDOW for body.c. */
size_t conn_buffer_bytes(void);

/* How the connection should end when conn_serve returns. */
enum conn_end { CONN_CLOSE, CONN_LINGER };

/* Serves requests on c until the client leaves, a timeout, an error, or
 * shutdown. Does not close c->fd: the caller does, as told. */
enum conn_end conn_serve(struct conn *c);

/* Reads more input into buf[len..len+max) (max is capped by the room left),
 * waiting at most until deadline_ms (knot_now_ms clock). Returns the bytes
 * read, 0 at end of input, -1 on error, -2 on timeout. */
long conn_fill(struct conn *c, size_t max, long long deadline_ms);

#endif /* KNOT_CONN_H */

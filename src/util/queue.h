/* SPDX-License-Identifier: MIT */
/*
 * Intrusive FIFO of threads linked through cap__thread.run_next. O(1) push
 * and pop; no allocation; not thread-safe (the owner serialises).
 */
#ifndef CAP_UTIL_QUEUE_H
#define CAP_UTIL_QUEUE_H

#include <stddef.h>

#include "thread/thread.h"

typedef struct cap__tqueue {
    struct cap__thread *head;
    struct cap__thread *tail;
    size_t len;
} cap__tqueue;

/* Inline: these sit on the yield and wake-up paths. */
static inline void cap__tqueue_push(cap__tqueue *q, struct cap__thread *t)
{
    t->run_next = NULL;
    if (q->tail != NULL)
        q->tail->run_next = t;
    else
        q->head = t;
    q->tail = t;
    q->len++;
}

static inline void cap__tqueue_push_front(cap__tqueue *q, struct cap__thread *t)
{
    t->run_next = q->head;
    q->head = t;
    if (q->tail == NULL)
        q->tail = t;
    q->len++;
}

static inline struct cap__thread *cap__tqueue_pop(cap__tqueue *q)
{
    struct cap__thread *t = q->head;
    if (t == NULL)
        return NULL;
    q->head = t->run_next;
    if (q->head == NULL)
        q->tail = NULL;
    q->len--;
    t->run_next = NULL;
    return t;
}

/* Pops the head and pushes t at the tail in one step (a yield): the
 * length does not change. NULL, and t not queued, if q is empty. */
static inline struct cap__thread *cap__tqueue_rotate(cap__tqueue *q, struct cap__thread *t)
{
    struct cap__thread *head = q->head;
    if (head == NULL)
        return NULL;
    t->run_next = NULL;
    if (head == q->tail) { /* one element: t replaces it */
        q->head = t;
    } else {
        q->head = head->run_next;
        q->tail->run_next = t;
    }
    q->tail = t;
    head->run_next = NULL;
    return head;
}

#endif /* CAP_UTIL_QUEUE_H */

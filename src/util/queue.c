/* SPDX-License-Identifier: MIT */
/* Intrusive thread FIFO; see queue.h. */
#include "util/queue.h"

#include "thread/thread.h"

void cap__tqueue_push(cap__tqueue *q, cap__thread *t)
{
    t->run_next = NULL;
    if (q->tail != NULL)
        q->tail->run_next = t;
    else
        q->head = t;
    q->tail = t;
    q->len++;
}

cap__thread *cap__tqueue_pop(cap__tqueue *q)
{
    cap__thread *t = q->head;
    if (t == NULL)
        return NULL;
    q->head = t->run_next;
    if (q->head == NULL)
        q->tail = NULL;
    q->len--;
    t->run_next = NULL;
    return t;
}

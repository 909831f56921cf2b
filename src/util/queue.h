/* SPDX-License-Identifier: MIT */
/*
 * Intrusive FIFO of threads linked through cap__thread.run_next. O(1) push
 * and pop; no allocation; not thread-safe (the owner serialises).
 */
#ifndef CAP_UTIL_QUEUE_H
#define CAP_UTIL_QUEUE_H

#include <stddef.h>

struct cap__thread;

typedef struct cap__tqueue {
    struct cap__thread *head;
    struct cap__thread *tail;
    size_t len;
} cap__tqueue;

void cap__tqueue_push(cap__tqueue *q, struct cap__thread *t);
struct cap__thread *cap__tqueue_pop(cap__tqueue *q);

#endif /* CAP_UTIL_QUEUE_H */

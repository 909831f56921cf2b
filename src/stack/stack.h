/* SPDX-License-Identifier: MIT */
/*
 * Stack-allocator interface. Everything above this file sees a stack only
 * as [lo, hi) plus the guard below lo; the allocator behind it is free to
 * change (the stacks issue replaces the pool internals: large
 * MAP_NORESERVE reservations, trimming, linked chunks).
 *
 * Current implementation (pool.c): stacks carved from large MAP_NORESERVE
 * regions, committed lazily by the kernel, a guard page below each
 * (MADV_GUARD_INSTALL where the kernel has it, mprotect otherwise),
 * recycled LIFO per size on free. Thread-safe.
 */
#ifndef CAP_STACK_STACK_H
#define CAP_STACK_STACK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cap__stack {
    void *lo;         /* lowest usable byte; the guard lies just below */
    void *hi;         /* one past the highest usable byte */
    size_t guard;     /* bytes of guard below lo */
    struct cap__stack_slot *slot; /* allocator's bookkeeping */
} cap__stack;

/* 0 or -ENOMEM. size is rounded up to whole pages. */
int cap__stack_alloc(size_t size, cap__stack *out);
void cap__stack_free(cap__stack *s);
/* True when addr lies in the guard page below stack s. Async-signal-safe. */
bool cap__stack_guard_hit(const void *addr, const cap__stack *s);

#endif /* CAP_STACK_STACK_H */

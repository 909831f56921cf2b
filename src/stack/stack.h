/* SPDX-License-Identifier: MIT */
/*
 * Stack-allocator interface. Everything above this file sees a stack only
 * as [lo, hi) plus the guard below lo; the allocator behind it (pool.c,
 * guard.c) is free to change.
 *
 * Implementation (see pool.c for the layout and invariants): stacks carved
 * from large MAP_NORESERVE regions, committed lazily by the kernel,
 * recycled LIFO per size and trimmed past a high-water threshold on free.
 * Below each stack lies one page that is either
 *  - a guard: MADV_GUARD_INSTALL (Linux 6.13+, no extra VMA) or mprotect
 *    (one VMA split per stack, within a budget); guard > 0, a touch faults
 *    and overflow.c reports the thread;
 *  - or, once the mprotect budget is spent (or CAP_STACK_GUARD=canary), a
 *    canary: lo is then CAP__CANARY_BYTES past a page boundary, the bytes
 *    [lo - CAP__CANARY_BYTES, lo) must stay zero, and every context switch
 *    checks the stack being left (cap__stack_switch_hook); guard == 0.
 * Thread-safe.
 */
#ifndef CAP_STACK_STACK_H
#define CAP_STACK_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cap__stack {
    void *lo;         /* lowest usable byte; the guard lies just below */
    void *hi;         /* one past the highest usable byte */
    size_t guard;     /* bytes of guard below lo; 0 for a canary stack */
    struct cap__stack_slot *slot; /* allocator's bookkeeping */
} cap__stack;

/* 0 or -ENOMEM. size is rounded up to whole pages. */
int cap__stack_alloc(size_t size, cap__stack *out);
/* A user thread's stack: as cap__stack_alloc, except that a program built
 * for linked stacks (docs/stacks.md) gets a small first chunk instead,
 * whatever size it asked for, and grows by linking more. */
int cap__stack_alloc_thread(size_t size, cap__stack *out);
/* Recycles s. Must not run on s itself. Trims s past the high-water
 * threshold (CAP_STACK_TRIM) first. */
void cap__stack_free(cap__stack *s);
/* Readies s, whose thread has finished, for the next thread of the same
 * size without a trip through the pool (the per-worker TCB cache,
 * src/thread/table.c): trims it as cap__stack_free would. False when s
 * must go through cap__stack_free instead (linked stacks). */
bool cap__stack_keep(cap__stack *s);
/* Whether threads run on linked stacks (CAP_LINKED, src/stack/linked.h):
 * a parked thread may then sit on a small chunk with only
 * CAP__LINKED_RUNTIME_BYTES to spare, too little for heavy work such as
 * releasing another thread's stack. */
bool cap__stack_linked_mode(void);
/* True when addr lies in the guard page below stack s. Async-signal-safe. */
bool cap__stack_guard_hit(const void *addr, const cap__stack *s);
/* The lowest byte of the stack as allocated, for reports to the program
 * (cap_thread_getattr, cap_thread_getstack): lo, but for a canary stack
 * the start of its canary zone, so the size reported is the one the
 * thread was created with and can create another. */
void *cap__stack_reported_lo(const cap__stack *s);

/* Reads the CAP_STACK_* and CAP_LINKED_* settings (src/stack/settings.c);
 * called once by cap__config_load. Exits(2) on an invalid value. */
void cap__stack_config_load(void);

/* Per worker kernel thread, before it runs user code: gives it an
 * alternate signal stack, so a stack overflow (which leaves no stack to
 * run a handler on) is reported instead of killing the process silently.
 * The first call also installs the SIGSEGV handler (overflow.c). */
void cap__stack_kthread_init(void);

/* Puts back the runtime's alternate signal stack on this kernel thread
 * (mapping one if the kernel thread started with the application's):
 * what a program's sigaltstack(SS_DISABLE) gets instead (altstack.c).
 * 0 or an error number. */
int cap__stack_alt_restore(void);

/* ---- the switch path ---------------------------------------------------- */

#define CAP__CANARY_BYTES 64

/* Non-zero once any canary stack has been handed out. */
extern __attribute__((visibility("hidden"))) int cap__stack_canaries_live;
/* Checks the canary of the stack this kernel thread is leaving (if it has
 * one) and remembers whether the one at to_lo has one. Reports and aborts
 * on a damaged canary. */
void cap__stack_canary_switch(const void *to_lo);

/* Bytes between a stack's lo and its split-stack limit (src/stack/linked.h). */
#define CAP__STACK_LIMIT_RESERVE 1024

/*
 * Called by cap__switch (src/sched/switch.h) around every context switch:
 *     uintptr_t limit = cap__stack_switch_hook(to_lo);
 *     ... switch ...
 *     cap__stack_switch_back(limit);
 * to_lo is the lowest usable byte of the stack being switched to.
 *  - Canary check (guard.c): one predictable branch unless canary stacks
 *    exist.
 *  - Split-stack limit (%fs:0x70, linked.h): the leaving context's limit
 *    is kept in the switch's own frame and put back when that context
 *    resumes; a context entered for the first time starts with the limit
 *    of its stack. Two moves; harmless for code built without split
 *    stacks, which never reads the word.
 */
static inline uintptr_t cap__stack_switch_hook(const void *to_lo)
{
    if (__builtin_expect(cap__stack_canaries_live != 0, 0))
        cap__stack_canary_switch(to_lo);
    uintptr_t limit, next = (uintptr_t)to_lo + CAP__STACK_LIMIT_RESERVE;
    __asm__ volatile("movq %%fs:0x70, %0" : "=r"(limit));
    __asm__ volatile("movq %0, %%fs:0x70" : : "r"(next) : "memory");
    return limit;
}

static inline void cap__stack_switch_back(uintptr_t limit)
{
    __asm__ volatile("movq %0, %%fs:0x70" : : "r"(limit) : "memory");
}

#endif /* CAP_STACK_STACK_H */

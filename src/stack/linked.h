/* SPDX-License-Identifier: MIT */
/*
 * Linked stacks: the runtime side of -fsplit-stack (the paper's Section 3
 * with today's compilers). Private to src/stack.
 *
 * Code compiled with -fsplit-stack starts every function with
 *     cmp %fs:0x70, %rsp            (or lea -FRAME(%rsp),%r11; cmp %fs:0x70,%r11)
 *     jb  slow
 * and on the slow path calls __morestack with r10 = frame bytes and
 * r11 = bytes of stack arguments. %fs:0x70 (glibc's tcbhead_t slot for
 * split stacks) is the *stack limit*: the lowest address the current
 * chunk lets a frame reach, plus a reserve. lld rewrites the prologue of
 * a function that calls code built without -fsplit-stack (any call into a
 * shared library, libc and libcapriccio included) to call
 * __morestack_non_split instead, unconditionally.
 *
 * Our pieces:
 *  - morestack.S: __morestack and __morestack_non_split. They save the
 *    argument registers, call cap__linked_link (C, on the old stack, in
 *    the reserve below the limit), switch to the chunk it returns, call
 *    the function body there, and on its return switch back, call
 *    cap__linked_unlink, and return. Their frame pointer and CFI let
 *    debuggers and _Unwind_Backtrace walk from a chunk back to the one
 *    below it.
 *  - linked.c: chunks, in size classes MinChunk << k, from MAP_NORESERVE
 *    regions; freed chunks go on LIFO lists of the kernel thread (so of
 *    the worker) that frees them: no lock, and the hot chunk stays warm.
 *    A chunk goes back the moment the call that linked it returns.
 *  - the stack limit is switched with each thread (cap__stack_limit_* in
 *    stack.h, called by cap__switch): it is saved in the frame of the
 *    switch, and a context entered for the first time starts with the
 *    limit of the stack it is entered on (lo + CAP__LINKED_RESERVE).
 *
 * Invariant: the limit is always (lowest byte of the chunk holding the
 * stack pointer) + CAP__LINKED_RESERVE, or 0 (no limit: a kernel thread
 * we never switched). The live links of a thread form a list (newest
 * first) of link records, each in the __morestack frame that made it, so
 * exit, longjmp and thread release can unlink what a return did not.
 */
#ifndef CAP_STACK_LINKED_H
#define CAP_STACK_LINKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capriccio/stack.h"
#include "stack/stack.h"

/* Bytes below the limit: GCC lets a function with a frame under 256 bytes
 * run below the limit without a check, and __morestack's own work (saved
 * registers, cap__linked_link, mmap on a new region) runs there too. */
#define CAP__LINKED_RESERVE CAP__STACK_LIMIT_RESERVE

/* One link: lives in the __morestack frame on the stack it was called
 * from; layout shared with morestack.S (offsets in bytes). */
struct cap__link {
    struct cap__link *prev;       /*  0: the link made before this one */
    struct cap__chunk *chunk;     /*  8: the chunk it linked */
    uintptr_t old_limit;          /* 16: the limit to restore */
    struct cap__stack_slot *slot; /* 24: thread whose list it is on (or NULL) */
    struct cap__chunk *dynamic;   /* 32: alloca/VLA blocks made while this
                                     link was the newest; freed with it */
};

typedef struct cap__linked_settings {
    bool enabled;        /* threads start on a small chunk (the program was
                            linked with the capriccio-linked script) */
    size_t first;        /* CAP_LINKED_FIRST: a thread's first chunk */
    size_t minchunk;     /* CAP_LINKED_MINCHUNK: the smallest chunk (MinChunk) */
    size_t external;     /* CAP_LINKED_EXTERNAL: room guaranteed to non-split code */
} cap__linked_settings;

extern __attribute__((visibility("hidden"))) cap__linked_settings cap__linked_cfg;

/* Reads the CAP_LINKED_* settings; exits(2) on an invalid value. */
void cap__linked_config_load(void);
/* Adds the linked-stack counters to *out. */
void cap__linked_stats(cap_stack_stats_t *out);

/* Per kernel thread set-up (its free lists), from cap__stack_kthread_init. */
void cap__linked_kthread_init(void);
/* A thread's first chunk, as a stack: [lo, hi) with guard 0. */
int cap__linked_stack_alloc(cap__stack *out, struct cap__stack_slot *slot);
/* Gives back s's first chunk and every chunk a live link still holds. */
void cap__linked_stack_free(struct cap__stack_slot *slot, void *first_chunk);
/* Whether sp lies on the first chunk of the thread on slot or on a chunk
 * one of its live links holds. Reads the thread's link list without a
 * lock: only for a thread that is not running (parked or queued), whose
 * list does not change meanwhile. Async-signal-safe. */
bool cap__linked_holds(const struct cap__stack_slot *slot, const void *sp);

/* Called by morestack.S (see there). */
void *cap__linked_link(size_t frame, size_t args, char *entry_sp, const void *site,
                       int nonsplit, struct cap__link *link);
void cap__linked_unlink(struct cap__link *link);

/* Resolves glibc's longjmp family for longjmp.c (at start-up). */
void cap__linked_longjmp_init(void);
struct __jmp_buf_tag;
/* siglongjmp(env, val) through longjmp.c, for a jump made later than the
 * program asked (a handler's jump handed to a parked thread: signal.c). */
_Noreturn void cap__linked_jump_now(struct __jmp_buf_tag *env, int val);

/* Unlinks every live link of the running thread whose chunk does not hold
 * sp (the target of a longjmp), restoring the limit of the chunk that does. */
void cap__linked_unwind_to(const void *sp);

/*
 * Changes in progress. Marked while this kernel thread is inside the
 * code above that changes its chunk free lists or the running thread's
 * link list (a link, an unlink, an unwind, an alloca block, a thread's
 * first chunk, the counters' lock): a signal handler's jump made at once
 * from there would unwind a list caught halfway (a chunk unlinked twice
 * or lost, a free list cut, the lock held by the code it abandons). So
 * the trampoline (signal.c) reads the mark into the handler's record
 * (cap__linked_busy_now) and clears it while the handler runs
 * (cap__linked_busy_swap, which returns the old value); a handler's jump into the thread it interrupted with
 * the mark set is handed to that thread (signal.c, as out of an
 * async-signal-safe call), and the code here makes it as the change
 * ends, on the alternate signal stack when it ran in a chunk's reserve
 * (cap__linked_call_on). Per kernel thread: the changes never park, and
 * a handler runs on the kernel thread it interrupted. Async-signal-safe.
 */
unsigned char cap__linked_busy_now(void);
unsigned char cap__linked_busy_swap(unsigned char v);

/* Calls fn with the stack pointer at top (16-aligned down), keeping
 * xmm0-7 (the arguments and results __morestack carries through the link
 * code) for when fn returns; call_on.S. */
void cap__linked_call_on(void *top, void (*fn)(void));

#endif /* CAP_STACK_LINKED_H */

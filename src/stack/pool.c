/* SPDX-License-Identifier: MIT */
/*
 * The default stack allocator: a LIFO pool per stack size.
 *
 * Address space comes from large MAP_NORESERVE regions (region.c: 1 GiB
 * each where the address-space limit allows, or one stack's worth if that
 * is larger), so a million stacks cost a few hundred mmap calls and no
 * swap reservation; the kernel commits a page only when a thread first
 * touches it, a 4 KiB page at a time (no huge pages). Each stack is
 *
 *     base                base+ps                                 hi
 *     | guard or canary page | usable ...................... top |
 *                            ^ lo (guard)   or  lo = base+ps+64 (canary)
 *
 * (guard.c decides what the page below is; stack.h states the contract).
 *
 * Freed stacks go on the free list of their size and are handed out again
 * LIFO, so the most recently used (still cache- and TLB-warm, still
 * committed) stack is reused first.
 *
 * Trimming. A thread that once went deep must not pin its pages for the
 * life of the process, but returning pages on every free would cost a
 * syscall and then a page fault per reuse. So on free, only a stack whose
 * high-water mark passed the threshold T (CAP_STACK_TRIM) is trimmed: the
 * pages of [lo, hi - T) go back with MADV_DONTNEED and the top T stays
 * committed. The high-water test must be cheap:
 *  - the word just below hi - T is read: non-zero means a frame was there.
 *    A stack that never got there reads the shared zero page (one minor
 *    fault per stack lifetime, none per reuse);
 *  - a frame may leave exactly that word zero, so every MINCORE_EVERY-th
 *    free of a size class also asks mincore() about the page below it.
 * A thread that went past T is thus trimmed at once in practice, and at
 * worst after a few reuses. Trimming resets the canary zone too (zero).
 *
 * Bookkeeping (cap__stack_slot) lives in malloc'd memory, not in the
 * stack, so a guard hit can be resolved without touching the stack. All
 * state is under one spinlock; allocation is O(1) except when a new region
 * is mapped; syscalls (guard install, trim) run outside the lock.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stack/internal.h"
#include "stack/linked.h"
#include "util/spin.h"

/* 1 in 256: mincore costs ~1 us here, and it is only the backstop for a
 * deep frame that left the probed word zero (measured: at 1 in 16 it was a
 * quarter of create+join). */
enum { MINCORE_EVERY = 256 };

struct size_class {
    size_t size;
    struct cap__stack_slot *free;
    unsigned frees;               /* for the sampled mincore check */
    struct size_class *next;
};

cap__stack_counters cap__stack_ctr;

static cap__spin pool_lock = CAP__SPIN_INIT;
static struct size_class *classes;
static char *region_cur, *region_end;

size_t cap__page_size(void)
{
    static size_t ps;
    if (ps == 0)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

static struct size_class *class_for(size_t size)
{
    for (struct size_class *c = classes; c != NULL; c = c->next)
        if (c->size == size)
            return c;
    struct size_class *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->size = size;
    c->next = classes;
    classes = c;
    return c;
}

/* Carves `bytes` of address space; maps a new region when the current one
 * is exhausted (the tail of the old one is left unused). */
static char *carve(size_t bytes)
{
    if (region_cur == NULL || (size_t)(region_end - region_cur) < bytes) {
        size_t len;
        char *p = cap__stack_region_map(bytes, &len);
        if (p == NULL)
            return NULL;
        region_cur = p;
        region_end = region_cur + len;
    }
    char *p = region_cur;
    region_cur += bytes;
    return p;
}

/* Where trimming would start on this stack (hi - T), or NULL when the
 * stack is too small to trim or trimming is off; computed once per stack. */
static char *trim_mark(const struct cap__stack_slot *slot)
{
    size_t ps = cap__page_size(), trim = cap__stack_cfg.trim;
    char *hi = slot->hi;
    char *bottom = (char *)((uintptr_t)slot->lo & ~(uintptr_t)(ps - 1));
    if (trim == 0 || (size_t)(hi - bottom) < trim + 2 * ps)
        return NULL;
    return hi - trim;
}

static struct cap__stack_slot *new_stack(size_t size)
{
    size_t ps = cap__page_size();
    struct cap__stack_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL)
        return NULL;
    cap__spin_lock(&pool_lock);
    char *base = carve(size + ps);
    cap__spin_unlock(&pool_lock);
    int kind = base == NULL ? -1 : cap__guard_install(base);
    if (kind < 0) {
        /* A carved range without its guard is never handed out. */
        free(slot);
        return NULL;
    }
    slot->kind = (uint8_t)kind;
    slot->hi = base + ps + size;
    if (kind == CAP__GUARD_KIND_CANARY) {
        slot->guard = 0;
        slot->lo = base + ps + CAP__CANARY_BYTES;
    } else {
        slot->guard = ps;
        slot->lo = base + ps;
    }
    slot->trim_mark = trim_mark(slot);
    cap__ctr_add(&cap__stack_ctr.carved, 1);
    return slot;
}

int cap__stack_alloc(size_t size, cap__stack *out)
{
    size_t ps = cap__page_size();
    size = (size + ps - 1) & ~(ps - 1);

    cap__spin_lock(&pool_lock);
    struct size_class *c = class_for(size);
    struct cap__stack_slot *slot = NULL;
    if (c != NULL && c->free != NULL) {
        slot = c->free;
        c->free = slot->next_free;
    }
    cap__spin_unlock(&pool_lock);

    if (slot != NULL) {
        cap__ctr_add(&cap__stack_ctr.reused, 1);
    } else {
        if (c == NULL || (slot = new_stack(size)) == NULL)
            return -ENOMEM;
    }
    out->lo = slot->lo;
    out->hi = slot->hi;
    out->guard = slot->guard;
    out->slot = slot;
    return 0;
}

/* The page below the threshold: was it (probably) used? See the header.
 * The word probe is inline (it runs on every free and keep); the sampled
 * mincore backstop is not. */
__attribute__((noinline)) static bool resident_below(char *mark)
{
    /* The page holding mark - 8 now maps the zero page and would look
     * resident: ask about the one below it. */
    size_t ps = cap__page_size();
    unsigned char vec;
    cap__ctr_add(&cap__stack_ctr.mincore_checks, 1);
    return mincore(mark - 2 * ps, ps, &vec) == 0 && (vec & 1) != 0;
}

__attribute__((no_sanitize_address)) static inline bool went_deep(char *mark, bool sample)
{
    if (((volatile uint64_t *)mark)[-1] != 0)
        return true;
    return sample && resident_below(mark);
}

__attribute__((noinline)) static void trim(struct cap__stack_slot *slot, char *mark)
{
    char *bottom = (char *)((uintptr_t)slot->lo & ~(uintptr_t)(cap__page_size() - 1));
    if (madvise(bottom, (size_t)(mark - bottom), MADV_DONTNEED) == 0) {
        cap__ctr_add(&cap__stack_ctr.trims, 1);
        cap__ctr_add(&cap__stack_ctr.trim_bytes, (unsigned long)(mark - bottom));
    }
}

/* sample: also ask mincore (see the header). */
static inline void maybe_trim(struct cap__stack_slot *slot, bool sample)
{
    char *mark = slot->trim_mark;
    if (mark != NULL && went_deep(mark, sample))
        trim(slot, mark);
}

int cap__stack_alloc_thread(size_t size, cap__stack *out)
{
    if (!cap__linked_cfg.enabled)
        return cap__stack_alloc(size, out);
    struct cap__stack_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL)
        return -ENOMEM;
    slot->kind = CAP__STACK_KIND_CHUNK;
    int rc = cap__linked_stack_alloc(out, slot);
    if (rc != 0)
        free(slot);
    return rc;
}

void cap__stack_free(cap__stack *s)
{
    struct cap__stack_slot *slot = s->slot;
    if (slot == NULL)
        return;
    s->slot = NULL;
    if (slot->kind == CAP__STACK_KIND_CHUNK) {
        cap__linked_stack_free(slot, slot->first);
        free(slot);
        return;
    }
    if (slot->links != NULL) /* split-stack code exited with chunks linked */
        cap__linked_stack_free(slot, NULL);
    size_t size = (size_t)((char *)slot->hi - (char *)slot->lo);
    if (slot->kind == CAP__GUARD_KIND_CANARY)
        size += CAP__CANARY_BYTES;
    cap__spin_lock(&pool_lock);
    struct size_class *c = class_for(size); /* exists: the stack came from it */
    cap__spin_unlock(&pool_lock);
    maybe_trim(slot, (__atomic_add_fetch(&c->frees, 1, __ATOMIC_RELAXED) % MINCORE_EVERY) == 0);
    cap__spin_lock(&pool_lock);
    slot->next_free = c->free;
    c->free = slot;
    cap__spin_unlock(&pool_lock);
    cap__ctr_add(&cap__stack_ctr.freed, 1);
}

bool cap__stack_linked_mode(void)
{
    return cap__linked_cfg.enabled;
}

bool cap__stack_keep(cap__stack *s)
{
    /* Per kernel thread: the caller is a worker, and a plain counter
     * there needs no atomic. */
    static __thread unsigned keeps __attribute__((tls_model("initial-exec")));
    struct cap__stack_slot *slot = s->slot;
    if (slot == NULL || slot->kind == CAP__STACK_KIND_CHUNK || slot->links != NULL)
        return false;
    maybe_trim(slot, ++keeps % MINCORE_EVERY == 0);
    return true;
}

void *cap__stack_reported_lo(const cap__stack *s)
{
    /* The zone takes the first CAP__CANARY_BYTES of the pages the size
     * asked for (new_stack); left out, a stack of CAP_STACK_MIN would be
     * reported below it, a size cap_thread_create refuses. */
    if (s->slot != NULL && s->slot->kind == CAP__GUARD_KIND_CANARY)
        return (char *)s->lo - CAP__CANARY_BYTES;
    return s->lo;
}

bool cap__stack_guard_hit(const void *addr, const cap__stack *s)
{
    const char *a = addr, *lo = s->lo;
    return s->slot != NULL && s->guard != 0 && a < lo && a >= lo - s->guard;
}

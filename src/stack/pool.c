/* SPDX-License-Identifier: MIT */
/*
 * The default stack allocator: a LIFO pool per stack size.
 *
 * Address space comes from large MAP_NORESERVE regions (REGION_BYTES each,
 * or one stack's worth if that is larger), so a million stacks cost a
 * handful of mmap calls and no swap reservation; the kernel commits a page
 * only when a thread first touches it. Each stack is [guard | usable], the
 * guard being one page below the usable part:
 *  - with MADV_GUARD_INSTALL (Linux 6.13+) the guard is a property of the
 *    page table, not a new VMA, so stacks do not hit vm.max_map_count;
 *  - otherwise mprotect(PROT_NONE), which splits the VMA (the stacks issue
 *    adds the canary fallback for when that budget runs out).
 *
 * Freed stacks go on the free list of their size and are handed out again
 * LIFO, so the most recently used (still cache- and TLB-warm, still
 * committed) stack is reused first. Pages are not returned to the kernel
 * yet: trimming is the stacks issue's work.
 *
 * Bookkeeping (cap__stack_slot) lives in malloc'd memory, not in the
 * stack, so a guard hit can be resolved without touching the stack.
 * All state is under one spinlock; allocation is O(1) except when a new
 * region is mapped.
 */
#include "stack/stack.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/spin.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define REGION_BYTES ((size_t)1 << 30) /* 1 GiB of address space per region */

struct cap__stack_slot {
    struct cap__stack_slot *next_free;
    void *lo, *hi;
    size_t guard;
};

struct size_class {
    size_t size;
    struct cap__stack_slot *free;
    struct size_class *next;
};

static cap__spin pool_lock = CAP__SPIN_INIT;
static struct size_class *classes;
static char *region_cur, *region_end;
static int guard_mode; /* 0: untested, 1: madvise guard works, 2: mprotect */

static size_t page_size(void)
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
        size_t len = bytes > REGION_BYTES ? bytes : REGION_BYTES;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        region_cur = p;
        region_end = region_cur + len;
    }
    char *p = region_cur;
    region_cur += bytes;
    return p;
}

static int install_guard(char *lo, size_t len)
{
    if (guard_mode != 2) {
        if (madvise(lo, len, MADV_GUARD_INSTALL) == 0) {
            guard_mode = 1;
            return 0;
        }
        if (guard_mode == 1)
            return -errno;
        guard_mode = 2; /* kernel without guard regions: fall back for good */
    }
    return mprotect(lo, len, PROT_NONE) == 0 ? 0 : -errno;
}

int cap__stack_alloc(size_t size, cap__stack *out)
{
    size_t ps = page_size();
    size = (size + ps - 1) & ~(ps - 1);

    cap__spin_lock(&pool_lock);
    struct size_class *c = class_for(size);
    struct cap__stack_slot *slot = NULL;
    if (c != NULL && c->free != NULL) {
        slot = c->free;
        c->free = slot->next_free;
    }
    cap__spin_unlock(&pool_lock);

    if (slot == NULL) {
        if (c == NULL)
            return -ENOMEM;
        slot = malloc(sizeof *slot);
        if (slot == NULL)
            return -ENOMEM;
        cap__spin_lock(&pool_lock);
        char *base = carve(size + ps);
        int rc = base == NULL ? -ENOMEM : install_guard(base, ps);
        cap__spin_unlock(&pool_lock);
        if (rc != 0) {
            /* A carved range with a failed guard is never handed out. */
            free(slot);
            return -ENOMEM;
        }
        slot->guard = ps;
        slot->lo = base + ps;
        slot->hi = base + ps + size;
    }
    out->lo = slot->lo;
    out->hi = slot->hi;
    out->guard = slot->guard;
    out->slot = slot;
    return 0;
}

void cap__stack_free(cap__stack *s)
{
    struct cap__stack_slot *slot = s->slot;
    if (slot == NULL)
        return;
    size_t size = (size_t)((char *)slot->hi - (char *)slot->lo);
    cap__spin_lock(&pool_lock);
    struct size_class *c = class_for(size); /* exists: the stack came from it */
    slot->next_free = c->free;
    c->free = slot;
    cap__spin_unlock(&pool_lock);
    s->slot = NULL;
}

bool cap__stack_guard_hit(const void *addr, const cap__stack *s)
{
    const char *a = addr, *lo = s->lo;
    return s->slot != NULL && a < lo && a >= lo - s->guard;
}

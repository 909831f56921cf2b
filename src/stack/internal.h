/* SPDX-License-Identifier: MIT */
/*
 * Private to src/stack: the settings, the statistics counters and the
 * contracts between the files of this directory.
 *
 *   settings.c  parses CAP_STACK_* / CAP_LINKED_* into cap__stack_cfg
 *   region.c    address-space regions for pool.c and linked.c
 *   pool.c      size classes carved from regions, LIFO reuse, trimming
 *   guard.c     what lies below a stack: guard page or canary
 *   overflow.c  SIGSEGV handler, alternate signal stacks, the report
 *   stats.c     the public cap_stack_stats / cap_stack_report
 *   linked.c, morestack.S, longjmp.c: linked stacks (linked.h)
 */
#ifndef CAP_STACK_INTERNAL_H
#define CAP_STACK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stack/stack.h"

enum cap__guard_policy {
    CAP__GUARD_AUTO = 0, /* MADV_GUARD_INSTALL, else mprotect within budget, else canary */
    CAP__GUARD_MPROTECT, /* skip MADV_GUARD_INSTALL (tests the older-kernel path) */
    CAP__GUARD_CANARY,   /* canaries only */
};

enum cap__guard_kind {
    CAP__GUARD_KIND_MADVISE = 0,
    CAP__GUARD_KIND_MPROTECT,
    CAP__GUARD_KIND_CANARY,
    CAP__STACK_KIND_CHUNK,  /* not a pool stack: a linked-mode thread's first chunk */
};

/* Per stack (and so per thread) bookkeeping, outside the stack itself. */
struct cap__stack_slot {
    struct cap__stack_slot *next_free;
    void *lo, *hi;
    size_t guard;
    char *trim_mark;            /* hi - CAP_STACK_TRIM, NULL: never trimmed */
    uint8_t kind;               /* enum cap__guard_kind */
    struct cap__link *links;    /* newest live link of the thread on this
                                   stack (linked.h), NULL when none */
    struct cap__chunk *first;   /* CAP__STACK_KIND_CHUNK: the chunk itself */
    struct cap__chunk *dynamic; /* alloca/VLA blocks made with no link live */
};

typedef struct cap__stack_settings {
    size_t trim;             /* CAP_STACK_TRIM: high-water threshold; 0 = never trim */
    enum cap__guard_policy guard;   /* CAP_STACK_GUARD */
    long guard_vmas;         /* CAP_STACK_GUARD_VMAS: -1 = derive from vm.max_map_count */
    bool stats_at_exit;      /* CAP_STACK_STATS=1: cap_stack_report(2) at exit */
} cap__stack_settings;

extern __attribute__((visibility("hidden"))) cap__stack_settings cap__stack_cfg;

/* Counters behind cap_stack_stats (relaxed atomics: they are statistics). */
typedef struct cap__stack_counters {
    atomic_ulong carved, reused, freed;
    atomic_ulong trims, trim_bytes, mincore_checks;
    atomic_ulong guard_kind[3];   /* by enum cap__guard_kind */
} cap__stack_counters;

extern __attribute__((visibility("hidden"))) cap__stack_counters cap__stack_ctr;

static inline void cap__ctr_add(atomic_ulong *c, unsigned long n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

size_t cap__page_size(void);

/* region.c: reserves a region of at least need bytes (MAP_NORESERVE, no
 * huge pages), 1 GiB when the address-space limit allows; its length in
 * *len. NULL when not even need bytes fit. Thread-safe. */
void *cap__stack_region_map(size_t need, size_t *len);

/* guard.c: prepares the page [page, page + page size) below a new stack.
 * Returns the kind it used, or -1 if it could not (the range is then not
 * to be used). Thread-safe. */
int cap__guard_install(char *page);

/* overflow.c: prints the overflow report for the thread whose stack has
 * its lowest usable byte at stack_lo (or the running thread when NULL),
 * then aborts. how: what was seen ("guard page hit at 0x..."). */
_Noreturn void cap__overflow_report(const void *stack_lo, const void *fault_addr,
                                    const char *how);

#endif /* CAP_STACK_INTERNAL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Stack statistics: the default pooled stacks (reuse, trimming, which
 * kind of guard protects them) and the linked stacks of programs built
 * with -fsplit-stack (chunks linked and unlinked, the paper's internal and
 * external waste, the call sites that link most). See docs/stacks.md.
 * Included by <capriccio.h>.
 */
#ifndef CAPRICCIO_STACK_H
#define CAPRICCIO_STACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cap_stack_stats {
    /* Default stacks. */
    uint64_t stacks_carved;    /* stacks ever created */
    uint64_t stacks_reused;    /* allocations served by a recycled stack */
    uint64_t stacks_freed;
    uint64_t trims;            /* recycled stacks whose deep pages were given back */
    uint64_t trimmed_bytes;    /* address range those trims covered */
    uint64_t mincore_checks;   /* sampled high-water checks */
    uint64_t guards_madvise;   /* stacks guarded by MADV_GUARD_INSTALL */
    uint64_t guards_mprotect;  /* stacks guarded by mprotect (VMA budget) */
    uint64_t guards_canary;    /* stacks protected by a canary only */

    /* Linked stacks (all zero unless the program runs on them). */
    uint64_t chunks_linked;    /* calls that needed a new chunk */
    uint64_t chunks_unlinked;  /* such calls that returned (or unwound) */
    uint64_t nonsplit_links;   /* of chunks_linked: for calls into non-split code */
    uint64_t chunks_mapped;    /* chunks ever carved, all sizes */
    uint64_t chunks_free;      /* chunks now waiting in the per-worker free lists */
    uint64_t internal_waste;   /* bytes left unused in the chunk being left, summed
                                  over links (the paper's internal wasted space) */
    uint64_t external_waste;   /* bytes of the new chunk beyond what the call asked
                                  for, summed over links (external wasted space) */
} cap_stack_stats_t;

/* Fills *out; EINVAL if out is NULL. Counters are totals since start. */
int cap_stack_stats(cap_stack_stats_t *out);

typedef struct cap_stack_site {
    const void *site;          /* return address of the call that linked */
    uint64_t links;
} cap_stack_site_t;

/* The call sites that linked chunks most, busiest first; returns how many
 * it wrote (at most max). Sites are sampled exactly (every link counts)
 * in a fixed-size table: with more distinct sites than its size, rare
 * ones may be missing. */
size_t cap_stack_top_sites(cap_stack_site_t *out, size_t max);

/* Writes a readable report of all the above (sites symbolised) to fd.
 * Also printed at exit with CAP_STACK_STATS=1. Returns 0 or an errno. */
int cap_stack_report(int fd);

#ifdef __cplusplus
}
#endif

#endif /* CAPRICCIO_STACK_H */

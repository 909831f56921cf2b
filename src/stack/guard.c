/* SPDX-License-Identifier: MIT */
/*
 * What lies below each stack: a guard page, or a canary.
 *
 * Policy (CAP_STACK_GUARD=auto, the default), decided per new stack:
 *  1. MADV_GUARD_INSTALL (Linux 6.13+): the guard is a page-table marker,
 *     not a VMA, so a million guards cost nothing against vm.max_map_count.
 *     The first EINVAL means the kernel lacks it; we stop asking.
 *  2. mprotect(PROT_NONE): splits the region's VMA, about two VMAs per
 *     stack. Allowed while the budget lasts (CAP_STACK_GUARD_VMAS, default
 *     half of vm.max_map_count, leaving the rest to malloc, the
 *     application and its libraries), or until the kernel says ENOMEM.
 *  3. Canary: the page is left as it is (untouched, so it costs no
 *     memory), and the stack's lo moves up by CAP__CANARY_BYTES; those
 *     bytes are zero (lazily committed memory reads as zero) and must stay
 *     zero. Every time a thread switches away from such a stack,
 *     cap__stack_canary_switch checks that the stack pointer is above lo
 *     and that the zone is still zero, and if not reports the thread as a
 *     guard hit would. The zone catches excursions past lo that came back
 *     before the switch; the stack-pointer test catches a thread that is
 *     past lo now, even if its frames skipped the zone without writing it
 *     (sparse frames: large arrays left unwritten). Known limits, stated
 *     in docs/stacks.md: detection is after the fact (the overflow may
 *     already have damaged the stack below), and an excursion that came
 *     back having written only zeros over the zone is not seen.
 *
 * The canary check costs, per switch, one load and one predictable branch
 * while no canary stack exists (cap__stack_switch_hook). Once some exist:
 * a TLS pointer to the canary of the stack this kernel thread is running
 * on, and a read of one cache line of it at each switch away.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "arch/context.h"
#include "stack/internal.h"
#include "util/spin.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

enum { VMAS_PER_GUARD = 2 };

int cap__stack_canaries_live;

static cap__spin budget_lock = CAP__SPIN_INIT;
static bool madvise_broken;  /* the kernel has no MADV_GUARD_INSTALL */
static long vmas_left = -1;  /* mprotect budget; -1 until first needed */

/* The canary zone of the stack this kernel thread runs on, or NULL. */
static __thread const uint64_t *running_canary __attribute__((tls_model("initial-exec")));

static long default_budget(void)
{
    long max = 65530; /* the kernel's default, if /proc is unreadable */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &max) != 1)
            max = 65530;
        fclose(f);
    }
    return max / 2;
}

/* Takes VMAS_PER_GUARD from the budget; false when it is spent. */
static bool take_budget(void)
{
    cap__spin_lock(&budget_lock);
    if (vmas_left < 0)
        vmas_left = cap__stack_cfg.guard_vmas >= 0 ? cap__stack_cfg.guard_vmas
                                                   : default_budget();
    bool ok = vmas_left >= VMAS_PER_GUARD;
    if (ok)
        vmas_left -= VMAS_PER_GUARD;
    cap__spin_unlock(&budget_lock);
    return ok;
}

static void spend_budget(void)
{
    cap__spin_lock(&budget_lock);
    vmas_left = 0;
    cap__spin_unlock(&budget_lock);
}

int cap__guard_install(char *page)
{
    size_t ps = cap__page_size();
    enum cap__guard_policy policy = cap__stack_cfg.guard;
    int kind = CAP__GUARD_KIND_CANARY;

    if (policy == CAP__GUARD_AUTO && !__atomic_load_n(&madvise_broken, __ATOMIC_RELAXED)) {
        if (madvise(page, ps, MADV_GUARD_INSTALL) == 0) {
            kind = CAP__GUARD_KIND_MADVISE;
            goto done;
        }
        if (errno != EINVAL)
            return -1; /* e.g. ENOMEM for the page table: a real failure */
        __atomic_store_n(&madvise_broken, true, __ATOMIC_RELAXED);
    }
    if (policy != CAP__GUARD_CANARY && take_budget()) {
        if (mprotect(page, ps, PROT_NONE) == 0) {
            kind = CAP__GUARD_KIND_MPROTECT;
            goto done;
        }
        if (errno != ENOMEM)
            return -1;
        spend_budget(); /* the kernel's map count is the real limit */
    }
    __atomic_store_n(&cap__stack_canaries_live, 1, __ATOMIC_RELAXED);
done:
    cap__ctr_add(&cap__stack_ctr.guard_kind[kind], 1);
    return kind;
}

/* A damaged canary is found on the overflowing stack itself, which has no
 * room left: the report runs on a stack of its own. One report at most
 * per process (it aborts), so one static stack is enough. */
static char report_stack[64 * 1024] __attribute__((aligned(16)));
static const void *report_lo;

static void *report_entry(void *zone)
{
    cap__overflow_report(report_lo, zone,
                         "it ran past the end of its stack (canary check at a switch)");
}

static _Noreturn void report_off_stack(const uint64_t *zone)
{
    void *ignored;
    report_lo = (const char *)zone + CAP__CANARY_BYTES;
    cap__ctx_switch(&ignored, cap__ctx_make(report_stack + sizeof report_stack, report_entry,
                                            (void *)zone));
    __builtin_unreachable();
}

static bool is_canary_lo(const void *lo)
{
    return ((uintptr_t)lo & (cap__page_size() - 1)) == CAP__CANARY_BYTES;
}

/* Reads raw stack memory that AddressSanitizer may have poisoned (the
 * redzones of the very frames that overflowed): not instrumented. */
__attribute__((no_sanitize_address)) void cap__stack_canary_switch(const void *to_lo)
{
    const uint64_t *zone = running_canary;
    if (zone != NULL) {
        /* Two tests: the stack pointer is below lo right now (the frames of
         * this very switch are beyond the end), or some frame since the
         * last switch wrote the zone (an excursion that came back). */
        uint64_t any = (const char *)__builtin_frame_address(0) <
                       (const char *)zone + CAP__CANARY_BYTES;
        for (size_t i = 0; i < CAP__CANARY_BYTES / sizeof *zone; i++)
            any |= zone[i];
        if (any != 0)
            report_off_stack(zone);
    }
    running_canary = is_canary_lo(to_lo)
                         ? (const uint64_t *)((const char *)to_lo - CAP__CANARY_BYTES)
                         : NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * The stack settings, read once at start-up from the environment (called
 * by cap__config_load). Same rules as every setting: an invalid value
 * exits(2) with a message listing the valid ones. Documented in
 * docs/stacks.md.
 *
 *   CAP_STACK_TRIM        high-water threshold: a recycled stack that was
 *                         used deeper than this gives the pages beyond it
 *                         back to the kernel. Bytes (K/M/G suffix), a
 *                         multiple of the page size; 0 or "off": never.
 *                         Default 64K.
 *   CAP_STACK_GUARD       auto (default) | mprotect | canary
 *   CAP_STACK_GUARD_VMAS  how many VMAs mprotect guards may add before
 *                         canaries take over; default: half of
 *                         vm.max_map_count
 *   CAP_STACK_STATS       1: print cap_stack_report to stderr at exit
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "stack/internal.h"
#include "stack/linked.h"

#define DEFAULT_TRIM ((size_t)64 * 1024)

cap__stack_settings cap__stack_cfg = {
    .trim = DEFAULT_TRIM,
    .guard = CAP__GUARD_AUTO,
    .guard_vmas = -1,
    .stats_at_exit = false,
};

static void load_trim(void)
{
    const char *s = getenv("CAP_STACK_TRIM");
    if (s == NULL)
        return;
    if (strcmp(s, "off") == 0) {
        cap__stack_cfg.trim = 0;
        return;
    }
    unsigned long long v;
    if (!cap__config_parse_size(s, &v) || v % cap__page_size() != 0 ||
        v > ((size_t)1 << 30))
        cap__config_bad("CAP_STACK_TRIM", s,
                        "off, 0, or bytes up to 1G in whole pages, optionally with a K, M "
                        "or G suffix (for example 64K)");
    cap__stack_cfg.trim = (size_t)v;
}

static void load_guard(void)
{
    const char *s = getenv("CAP_STACK_GUARD");
    if (s == NULL)
        return;
    if (strcmp(s, "auto") == 0)
        cap__stack_cfg.guard = CAP__GUARD_AUTO;
    else if (strcmp(s, "mprotect") == 0)
        cap__stack_cfg.guard = CAP__GUARD_MPROTECT;
    else if (strcmp(s, "canary") == 0)
        cap__stack_cfg.guard = CAP__GUARD_CANARY;
    else
        cap__config_bad("CAP_STACK_GUARD", s,
                        "auto (guard pages, canaries past the VMA budget), mprotect "
                        "(skip MADV_GUARD_INSTALL), canary");
}

static void load_guard_vmas(void)
{
    const char *s = getenv("CAP_STACK_GUARD_VMAS");
    if (s == NULL)
        return;
    unsigned long long v;
    if (!cap__config_parse_size(s, &v) || strpbrk(s, "kKmMgG") != NULL || v > 1000000000)
        cap__config_bad("CAP_STACK_GUARD_VMAS", s, "a whole number from 0 to 1000000000");
    cap__stack_cfg.guard_vmas = (long)v;
}

static void load_stats(void)
{
    cap__config_flag("CAP_STACK_STATS", "0", "1", "0, or 1 (print the stack report at exit)",
                     &cap__stack_cfg.stats_at_exit);
}

static void report_at_exit(void)
{
    cap_stack_report(2);
}

void cap__stack_config_load(void)
{
    load_trim();
    load_guard();
    load_guard_vmas();
    load_stats();
    cap__linked_config_load();
    if (cap__stack_cfg.stats_at_exit)
        atexit(report_at_exit);
}

/* SPDX-License-Identifier: MIT */
/*
 * The public stack statistics: cap_stack_stats and cap_stack_report
 * (include/capriccio/stack.h). Reads relaxed counters, so a report taken
 * while threads run is a consistent-enough snapshot, not an atomic one.
 * The report goes through write(2) on the caller's descriptor, never
 * stdio, so it is safe at exit and from any thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "capriccio.h"
#include "stack/internal.h"
#include "stack/linked.h"

int cap_stack_stats(cap_stack_stats_t *out)
{
    if (out == NULL)
        return EINVAL;
    *out = (cap_stack_stats_t){ 0 };
    cap__stack_counters *c = &cap__stack_ctr;
    out->stacks_carved = atomic_load_explicit(&c->carved, memory_order_relaxed);
    out->stacks_reused = atomic_load_explicit(&c->reused, memory_order_relaxed);
    out->stacks_freed = atomic_load_explicit(&c->freed, memory_order_relaxed);
    out->trims = atomic_load_explicit(&c->trims, memory_order_relaxed);
    out->trimmed_bytes = atomic_load_explicit(&c->trim_bytes, memory_order_relaxed);
    out->mincore_checks = atomic_load_explicit(&c->mincore_checks, memory_order_relaxed);
    out->guards_madvise = atomic_load(&c->guard_kind[CAP__GUARD_KIND_MADVISE]);
    out->guards_mprotect = atomic_load(&c->guard_kind[CAP__GUARD_KIND_MPROTECT]);
    out->guards_canary = atomic_load(&c->guard_kind[CAP__GUARD_KIND_CANARY]);
    cap__linked_stats(out);
    return 0;
}

static void put(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(int fd, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

static void put_site(int fd, const cap_stack_site_t *s)
{
    Dl_info info;
    if (dladdr(s->site, &info) != 0 && info.dli_sname != NULL)
        put(fd, "    %10llu  %p  %s+0x%lx (%s)\n", (unsigned long long)s->links, s->site,
            info.dli_sname,
            (unsigned long)((const char *)s->site - (const char *)info.dli_saddr),
            info.dli_fname);
    else if (dladdr(s->site, &info) != 0 && info.dli_fname != NULL)
        put(fd, "    %10llu  %p  %s+0x%lx\n", (unsigned long long)s->links, s->site,
            info.dli_fname, (unsigned long)((const char *)s->site - (const char *)info.dli_fbase));
    else
        put(fd, "    %10llu  %p\n", (unsigned long long)s->links, s->site);
}

int cap_stack_report(int fd)
{
    cap_stack_stats_t st;
    cap_stack_stats(&st);
    put(fd, "capriccio stacks: %llu carved, %llu reused, %llu freed; %llu trims (%llu KiB "
            "given back, %llu mincore checks)\n",
        (unsigned long long)st.stacks_carved, (unsigned long long)st.stacks_reused,
        (unsigned long long)st.stacks_freed, (unsigned long long)st.trims,
        (unsigned long long)(st.trimmed_bytes >> 10), (unsigned long long)st.mincore_checks);
    put(fd, "  guards: %llu madvise, %llu mprotect, %llu canary\n",
        (unsigned long long)st.guards_madvise, (unsigned long long)st.guards_mprotect,
        (unsigned long long)st.guards_canary);
    if (st.chunks_linked == 0 && st.chunks_mapped == 0)
        return 0;
    put(fd, "  linked: %llu links (%llu into non-split code), %llu unlinks; %llu chunks "
            "mapped, %llu free\n",
        (unsigned long long)st.chunks_linked, (unsigned long long)st.nonsplit_links,
        (unsigned long long)st.chunks_unlinked, (unsigned long long)st.chunks_mapped,
        (unsigned long long)st.chunks_free);
    if (st.chunks_linked != 0)
        put(fd, "  waste per link: internal %llu bytes, external %llu bytes (averages)\n",
            (unsigned long long)(st.internal_waste / st.chunks_linked),
            (unsigned long long)(st.external_waste / st.chunks_linked));
    cap_stack_site_t sites[10];
    size_t n = cap_stack_top_sites(sites, 10);
    if (n != 0)
        put(fd, "  top linking call sites:\n");
    for (size_t i = 0; i < n; i++)
        put_site(fd, &sites[i]);
    return 0;
}

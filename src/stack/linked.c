/* SPDX-License-Identifier: MIT */
/*
 * Linked stacks: chunks, links and their counters (design in linked.h).
 *
 * Chunk layout (size = MinChunk << class):
 *
 *   base                 base + RESERVE                        top   base+size
 *   | reserve (below limit) | frames grow down from top ....... | header |
 *                         ^ the limit while this chunk is current
 *
 * The header sits at the top, in the page the frames touch first, so a
 * chunk costs no extra page of memory for its bookkeeping.
 *
 * Free lists: one LIFO per size class per kernel thread (TLS), so a worker
 * and all its user threads share them without a lock, as the paper's
 * "800 threads share one 1 MB chunk". A chunk is pushed back on the list
 * of the kernel thread that frees it, which is not always the one that
 * took it (a thread released by a joiner on another worker): so a list
 * longer than LOCAL_MAX spills half of itself to a global depot, and an
 * empty list refills from the depot before new chunks are carved from
 * regions (region.c; both under a spinlock, off the hot path). Chunks
 * are never unmapped (a free chunk keeps its pages: it is the next one
 * handed out).
 *
 * Counters and the call-site table are per kernel thread too (plain
 * increments on the hot path); cap_stack_stats sums them over a registry
 * of every kernel thread that ever linked.
 *
 * Who may call: cap__linked_link/unlink only from morestack.S, on the
 * stack of the thread that links; the rest from pool.c, stats.c and
 * longjmp.c.
 *
 * No vector registers: the link path runs between the caller's arguments
 * and the function that takes them, and morestack.S saves only the
 * integer argument registers (16 fewer moves per link). So this file is
 * compiled with -mgeneral-regs-only (cmake/linked.cmake), copies stack
 * arguments with a plain loop, and on the link path calls nothing in libc
 * but mmap (a system call) and, on a fatal error, cap__die; and, to make
 * a signal handler's jump held back while it ran (linked.h,
 * cap__linked_busy_swap), sigaltstack, then the jump on that stack.
 *
 * Each function here that changes a free list or a link list runs as a
 * change (busy_begin .. busy_end), so that a handler's jump waits for it
 * to end (linked.h). It costs the link and the unlink two stores of a
 * byte and one load of a global word.
 */
#include "stack/linked.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/config.h"
#include "sched/worker.h"
#include "stack/internal.h"
#include "thread/thread.h"
#include "util/die.h"
#include "util/sigctx.h"
#include "util/spin.h"

enum {
    NCLASSES = 32,
    SITES = 64,         /* per kernel thread call-site table (power of two) */
    LOCAL_MAX = 64,     /* free chunks a kernel thread keeps per class */
};

struct cap__chunk {     /* at the top of every chunk; 32 bytes keeps top 16-aligned */
    struct cap__chunk *next_free;
    size_t size;
    uint32_t cls;
    uint32_t pad;
    struct cap__chunk *next_dynamic; /* alloca/VLA blocks of one link */
};

/* Per kernel thread: free lists, counters, call sites. */
struct kstate {
    unsigned char busy; /* a change runs (linked.h, cap__linked_busy_swap):
                           here, where the link code has it in a register */
    struct cap__chunk *free[NCLASSES];
    uint32_t nfree_class[NCLASSES];
    uint64_t nfree;
    uint64_t links, unlinks, nonsplit, internal_waste, external_waste;
    struct { const void *site; uint64_t links; } sites[SITES];
    struct kstate *next_registered;
};

cap__linked_settings cap__linked_cfg = {
    .enabled = false,
    .first = 2 * 1024,    /* two first chunks per page: see runtime_calls.S */
    .minchunk = 2 * 1024,
    .external = 16 * 1024,
};

/* Read by __morestack_non_split (morestack.S). */
__attribute__((visibility("hidden"))) size_t cap__linked_external_bytes = 16 * 1024;

/* Defined (by the linker script capriccio-linked.ld) in programs linked
 * for linked stacks. */
extern const char capriccio_linked_stacks __attribute__((weak));

static __thread struct kstate *kself __attribute__((tls_model("initial-exec")));
static struct kstate *registry;
static cap__spin lock = CAP__SPIN_INIT; /* registry, carving and the depot */
static struct cap__chunk *depot[NCLASSES];
static uint64_t depot_count;
static char *region_cur, *region_end;
static atomic_ulong chunks_mapped;

/* ---- settings ---------------------------------------------------------- */

static size_t load_size(const char *var, size_t def, size_t min, size_t max, bool pow2)
{
    const char *s = getenv(var);
    if (s == NULL)
        return def;
    unsigned long long v;
    if (!cap__config_parse_size(s, &v) || v < min || v > max ||
        (pow2 && (v & (v - 1)) != 0)) {
        char valid[160];
        snprintf(valid, sizeof valid, "bytes from %zu to %zu%s, optionally with a K or M "
                 "suffix", min, max, pow2 ? " that are a power of two" : "");
        cap__config_bad(var, s, valid);
    }
    return (size_t)v;
}

void cap__linked_config_load(void)
{
    /* Threads may start on small chunks only in a program whose every
     * function checks the limit: one linked with capriccio-linked.ld. */
    bool marked = &capriccio_linked_stacks != NULL;
    cap__linked_cfg.enabled = marked;
    const char *s = getenv("CAP_LINKED");
    if (s != NULL) {
        if (strcmp(s, "0") == 0)
            cap__linked_cfg.enabled = false;
        else if (strcmp(s, "1") != 0 || !marked)
            cap__config_bad("CAP_LINKED", s,
                            marked ? "0 (threads start on pooled stacks) or 1 (on small chunks)"
                                   : "0 (this program was not linked for linked stacks: "
                                     "see docs/stacks.md)");
    }
    cap__linked_cfg.minchunk = load_size("CAP_LINKED_MINCHUNK", cap__linked_cfg.minchunk,
                                         2048, (size_t)1 << 24, true);
    cap__linked_cfg.first = load_size("CAP_LINKED_FIRST", cap__linked_cfg.first, 2048,
                                      (size_t)1 << 30, false);
    cap__linked_cfg.external = load_size("CAP_LINKED_EXTERNAL", cap__linked_cfg.external,
                                         256, (size_t)1 << 30, false);
    cap__linked_external_bytes = cap__linked_cfg.external;
    cap__linked_longjmp_init();
}

/* ---- changes and the jumps they hold back (linked.h) --------------------- */

/* A handler's jump into this thread, handed to it while a change ran:
 * made now. The change may have run in the reserve of a chunk, so from
 * the alternate signal stack unless the kernel thread is on it already
 * (an unwind made by a handler's own jump). */
__attribute__((noinline, cold)) static void take_held_jump(void)
{
    cap__thread *self = cap__current();
    if (self == NULL || atomic_load(&self->jump_due) == NULL || cap__in_signal_handler())
        return;
    stack_t ss;
    if (syscall(SYS_sigaltstack, NULL, &ss) == 0 && !(ss.ss_flags & (SS_DISABLE | SS_ONSTACK)))
        cap__linked_call_on((char *)ss.ss_sp + ss.ss_size, cap__sig_take_jump_slow);
    else
        cap__sig_take_jump_slow();
}

static inline __attribute__((always_inline)) void busy_begin(struct kstate *k)
{
    k->busy = 1;
    atomic_signal_fence(memory_order_seq_cst); /* set before any list changes */
}

static inline __attribute__((always_inline)) void busy_end(struct kstate *k)
{
    atomic_signal_fence(memory_order_seq_cst); /* every change made before */
    k->busy = 0;
    atomic_signal_fence(memory_order_seq_cst);
    /* A handler that comes after the clear jumps at once and drops what
     * was handed before (signal.c); one that came before handed it. */
    if (__builtin_expect(atomic_load_explicit(&cap__sig_jumps_pending, memory_order_relaxed) != 0, 0))
        take_held_jump();
}

unsigned char cap__linked_busy_now(void)
{
    struct kstate *k = kself;
    return k != NULL ? k->busy : 0;
}

unsigned char cap__linked_busy_swap(unsigned char v)
{
    struct kstate *k = kself;
    if (k == NULL)
        return 0; /* nothing changed here ever (v is 0: what this returned) */
    unsigned char was = k->busy;
    k->busy = v;
    return was;
}

/* ---- chunks ------------------------------------------------------------ */

static struct kstate *kstate(void)
{
    struct kstate *k = kself;
    if (__builtin_expect(k != NULL, 1))
        return k;
    /* mmap, not calloc: no vector registers (see above). */
    k = mmap(NULL, sizeof *k, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (k == MAP_FAILED)
        cap__die("linked stacks: out of memory for per-thread state\n");
    cap__spin_lock(&lock);
    k->next_registered = registry;
    registry = k;
    cap__spin_unlock(&lock);
    kself = k;
    return k;
}

void cap__linked_kthread_init(void)
{
    /* Now, on a full stack, not in the reserve of a first link; and
     * before this kernel thread runs a user thread, so before any
     * handler's jump could unwind here meanwhile (the registry's lock). */
    kstate();
}

static inline uint32_t class_of(size_t bytes)
{
    uint32_t cls = 0;
    size_t size = cap__linked_cfg.minchunk;
    while (size < bytes && cls < NCLASSES - 1) {
        size <<= 1;
        cls++;
    }
    return cls;
}

static char *chunk_base(const struct cap__chunk *c)
{
    return (char *)c + sizeof *c - c->size;
}

__attribute__((noinline)) static struct cap__chunk *carve(uint32_t cls)
{
    size_t size = cap__linked_cfg.minchunk << cls;
    char *base = NULL;
    cap__spin_lock(&lock);
    if (region_cur == NULL || (size_t)(region_end - region_cur) < size) {
        size_t len;
        char *p = cap__stack_region_map(size, &len);
        if (p != NULL) {
            region_cur = p;
            region_end = region_cur + len;
        }
    }
    if (region_cur != NULL && (size_t)(region_end - region_cur) >= size) {
        base = region_cur;
        region_cur += size;
    }
    cap__spin_unlock(&lock);
    if (base == NULL)
        return NULL;
    atomic_fetch_add_explicit(&chunks_mapped, 1, memory_order_relaxed);
    struct cap__chunk *c = (struct cap__chunk *)(base + size - sizeof *c);
    c->size = size;
    c->cls = cls;
    return c;
}

__attribute__((noinline)) static struct cap__chunk *from_depot(uint32_t cls)
{
    cap__spin_lock(&lock);
    struct cap__chunk *c = depot[cls];
    if (c != NULL) {
        depot[cls] = c->next_free;
        depot_count--;
    }
    cap__spin_unlock(&lock);
    return c;
}

static inline __attribute__((always_inline)) struct cap__chunk *chunk_get(struct kstate *k,
                                                                          size_t bytes)
{
    uint32_t cls = class_of(bytes);
    struct cap__chunk *c = k->free[cls];
    if (__builtin_expect(c != NULL, 1)) {
        k->free[cls] = c->next_free;
        k->nfree_class[cls]--;
        k->nfree--;
        return c;
    }
    c = from_depot(cls);
    return c != NULL ? c : carve(cls);
}

__attribute__((noinline)) static void spill(struct kstate *k, uint32_t cls)
{
    uint32_t keep = LOCAL_MAX / 2;
    struct cap__chunk *c = k->free[cls];
    for (uint32_t i = 1; i < keep; i++)
        c = c->next_free;
    struct cap__chunk *rest = c->next_free;
    c->next_free = NULL;
    uint32_t moved = k->nfree_class[cls] - keep;
    k->nfree_class[cls] = keep;
    k->nfree -= moved;
    struct cap__chunk *last = rest;
    while (last->next_free != NULL)
        last = last->next_free;
    cap__spin_lock(&lock);
    last->next_free = depot[cls];
    depot[cls] = rest;
    depot_count += moved;
    cap__spin_unlock(&lock);
}

static inline __attribute__((always_inline)) void chunk_put(struct kstate *k,
                                                            struct cap__chunk *c)
{
    c->next_free = k->free[c->cls];
    k->free[c->cls] = c;
    k->nfree++;
    if (__builtin_expect(++k->nfree_class[c->cls] > LOCAL_MAX, 0))
        spill(k, c->cls);
}

/* ---- links (called by morestack.S) -------------------------------------- */

static inline uintptr_t read_limit(void)
{
    uintptr_t v;
    __asm__ volatile("movq %%fs:0x70, %0" : "=r"(v));
    return v;
}

static inline void write_limit(uintptr_t v)
{
    __asm__ volatile("movq %0, %%fs:0x70" : : "r"(v) : "memory");
}

static void count_site(struct kstate *k, const void *site)
{
    uintptr_t h = ((uintptr_t)site * 0x9e3779b97f4a7c15u) >> 58; /* 6 bits */
    for (unsigned i = 0; i < SITES; i++) {
        unsigned j = ((unsigned)h + i) & (SITES - 1);
        if (k->sites[j].site == site) {
            k->sites[j].links++;
            return;
        }
        if (k->sites[j].site == NULL) {
            k->sites[j].site = site;
            k->sites[j].links = 1;
            return;
        }
    }
    /* Table full: this site goes uncounted (documented in the header). */
}

/* The main thread runs on the process stack, which has no slot of ours:
 * its links are listed here (it may link chunks past its 8 MiB). */
static struct cap__stack_slot main_slot;

static struct cap__stack_slot *current_slot(void)
{
    cap__worker *w = cap__worker_self();
    cap__thread *t = w != NULL ? w->current : NULL;
    if (t == NULL)
        return NULL; /* a kernel thread we do not run: its links go unlisted */
    return t->stack.slot != NULL ? t->stack.slot : &main_slot;
}

void *cap__linked_link(size_t frame, size_t args, char *entry_sp, const void *site,
                       int nonsplit, struct cap__link *link)
{
    struct kstate *k = kstate();
    busy_begin(k);
    size_t need = frame + args + CAP__LINKED_RESERVE + 256 + sizeof(struct cap__chunk) + 64;
    struct cap__chunk *c = chunk_get(k, need);
    if (c == NULL)
        cap__die("linked stacks: out of memory for a %zu-byte chunk\n", need);
    uintptr_t old = read_limit();
    struct cap__stack_slot *slot = current_slot();
    link->chunk = c;
    link->old_limit = old;
    link->slot = slot;
    link->dynamic = NULL;
    link->prev = slot != NULL ? slot->links : NULL;
    if (slot != NULL)
        slot->links = link;

    char *base = chunk_base(c);
    char *top = (char *)c;
    char *sp = (char *)((uintptr_t)(top - args) & ~(uintptr_t)15);
    for (size_t i = 0; i < args / 8; i++) /* the caller's stack arguments */
        ((uint64_t *)sp)[i] = ((const uint64_t *)(entry_sp + 8))[i];
    write_limit((uintptr_t)base + CAP__LINKED_RESERVE);

    k->links++;
    k->nonsplit += (uint64_t)nonsplit;
    if (old != 0 && (uintptr_t)entry_sp > old - CAP__LINKED_RESERVE)
        k->internal_waste += (uintptr_t)entry_sp - (old - CAP__LINKED_RESERVE);
    size_t usable = (size_t)(top - base) - CAP__LINKED_RESERVE;
    if (usable > frame + args)
        k->external_waste += usable - frame - args;
    count_site(k, site);
    busy_end(k);
    return sp;
}

static void put_dynamic(struct kstate *k, struct cap__chunk *d)
{
    while (d != NULL) {
        struct cap__chunk *next = d->next_dynamic;
        chunk_put(k, d);
        d = next;
    }
}

void cap__linked_unlink(struct cap__link *link)
{
    struct kstate *k = kself; /* set: this kernel thread linked, or the thread moved */
    if (k == NULL)
        k = kstate();
    busy_begin(k);
    write_limit(link->old_limit);
    if (link->slot != NULL)
        link->slot->links = link->prev;
    chunk_put(k, link->chunk);
    if (__builtin_expect(link->dynamic != NULL, 0))
        put_dynamic(k, link->dynamic);
    k->unlinks++;
    busy_end(k);
}

/* The names libcapriccio-linked.a's __morestack calls through the GOT
 * (morestack.S); exported, not part of the API. */
extern __typeof(cap__linked_link) cap_linked_morestack_link
    __attribute__((alias("cap__linked_link"), visibility("default")));
extern __typeof(cap__linked_unlink) cap_linked_morestack_unlink
    __attribute__((alias("cap__linked_unlink"), visibility("default")));
extern size_t cap_linked_external_bytes
    __attribute__((alias("cap__linked_external_bytes"), visibility("default")));

void cap__linked_unwind_to(const void *sp)
{
    struct cap__stack_slot *slot = current_slot();
    if (slot == NULL)
        return;
    struct kstate *k = kstate();
    busy_begin(k);
    struct cap__link *l;
    while ((l = slot->links) != NULL) {
        const char *base = chunk_base(l->chunk), *top = (const char *)l->chunk;
        if ((const char *)sp >= base && (const char *)sp < top)
            break; /* the target runs on this link's chunk: it stays */
        slot->links = l->prev;
        write_limit(l->old_limit);
        chunk_put(k, l->chunk);
        put_dynamic(k, l->dynamic);
        k->unlinks++;
    }
    /* The limit of the chunk the target runs on, whether or not a link
     * went: a jump out of a signal handler comes from where the limit is
     * 0 (the trampoline's, src/stack/signal.c), and would leave it so. */
    l = slot->links;
    write_limit((uintptr_t)(l != NULL ? chunk_base(l->chunk) : (const char *)slot->lo) +
                CAP__LINKED_RESERVE);
    busy_end(k); /* a handler's jump held back meanwhile is made instead */
}

/*
 * alloca and variable-length arrays. Split-stack code checks a dynamic
 * allocation against the limit like a frame; when it does not fit it calls
 * this instead and uses the block returned. The block is a chunk on a list
 * of the newest live link (or of the thread, with no link live), so it
 * goes back when that link is unlinked (the linking call returns, or an
 * exception or longjmp passes), or when the thread's stack is freed. Also,
 * blocks allocated by frames deeper than the caller (so certainly gone:
 * all of one list's blocks come from frames on the same chunk) are freed
 * at the next allocation. A frame that allocates again at the same depth
 * keeps its earlier blocks (it may be alloca in a loop): those wait for
 * the link, or the thread, to end.
 */
void *__morestack_allocate_stack_space(size_t size);
__attribute__((visibility("default"), noinline)) void *__morestack_allocate_stack_space(size_t size)
{
    /* Runs in what is left of a chunk (often just the reserve): keep the
     * frame small. Reached directly, or from the executable's stub
     * (morestack.S) by the name cap_linked_allocate_stack_space. */
    struct kstate *k = kstate();
    busy_begin(k);
    uintptr_t caller_sp = (uintptr_t)__builtin_frame_address(0) + 16;
    struct cap__stack_slot *slot = current_slot();
    struct cap__chunk **list = slot == NULL ? NULL
                               : slot->links != NULL ? &slot->links->dynamic
                                                     : &slot->dynamic;
    /* next_free is unused while a block is handed out: it holds the
     * allocating caller's stack pointer. */
    while (list != NULL && *list != NULL && (uintptr_t)(*list)->next_free < caller_sp) {
        struct cap__chunk *dead = *list;
        *list = dead->next_dynamic;
        chunk_put(k, dead);
    }
    struct cap__chunk *c = chunk_get(k, size + sizeof(struct cap__chunk) + 16);
    if (c == NULL)
        cap__die("linked stacks: out of memory for a %zu-byte alloca\n", size);
    c->next_free = (struct cap__chunk *)caller_sp;
    c->next_dynamic = list != NULL ? *list : NULL;
    if (list != NULL)
        *list = c; /* else: not a user thread; the block is never reused */
    busy_end(k);
    return chunk_base(c);
}

extern __typeof(__morestack_allocate_stack_space) cap_linked_allocate_stack_space
    __attribute__((alias("__morestack_allocate_stack_space"), visibility("default")));

/* ---- first chunks ---------------------------------------------------------- */

int cap__linked_stack_alloc(cap__stack *out, struct cap__stack_slot *slot)
{
    struct kstate *k = kstate();
    busy_begin(k);
    struct cap__chunk *c = chunk_get(k, cap__linked_cfg.first);
    busy_end(k);
    if (c == NULL)
        return -ENOMEM;
    slot->first = c;
    slot->lo = chunk_base(c);
    slot->hi = c;
    slot->guard = 0;
    out->lo = slot->lo;
    out->hi = slot->hi;
    out->guard = 0;
    out->slot = slot;
    return 0;
}

bool cap__linked_holds(const struct cap__stack_slot *slot, const void *sp)
{
    const char *p = sp;
    if (slot == NULL)
        return false;
    if (p >= (const char *)slot->lo && p < (const char *)slot->hi)
        return true;
    for (const struct cap__link *l = slot->links; l != NULL; l = l->prev)
        if (p >= chunk_base(l->chunk) && p < (const char *)l->chunk)
            return true;
    return false;
}

void cap__linked_stack_free(struct cap__stack_slot *slot, void *first)
{
    struct kstate *k = kstate();
    busy_begin(k);
    /* Links a return never undid: the thread exited (or was cancelled)
     * from deep inside chunks. Read prev before the chunk holding the
     * next record is reused: chunk_put only writes a chunk's header. */
    for (struct cap__link *l = slot->links, *prev; l != NULL; l = prev) {
        prev = l->prev;
        chunk_put(k, l->chunk);
        put_dynamic(k, l->dynamic);
        k->unlinks++;
    }
    slot->links = NULL;
    put_dynamic(k, slot->dynamic);
    slot->dynamic = NULL;
    if (first != NULL)
        chunk_put(k, first);
    busy_end(k);
}

/* ---- statistics ---------------------------------------------------------- */

void cap__linked_stats(cap_stack_stats_t *out)
{
    struct kstate *self = kstate();
    busy_begin(self); /* the lock a jump's unlinks may take (spill) */
    cap__spin_lock(&lock);
    for (struct kstate *k = registry; k != NULL; k = k->next_registered) {
        out->chunks_linked += k->links;
        out->chunks_unlinked += k->unlinks;
        out->nonsplit_links += k->nonsplit;
        out->chunks_free += k->nfree;
        out->internal_waste += k->internal_waste;
        out->external_waste += k->external_waste;
    }
    out->chunks_free += depot_count;
    cap__spin_unlock(&lock);
    busy_end(self);
    out->chunks_mapped = atomic_load_explicit(&chunks_mapped, memory_order_relaxed);
}

size_t cap_stack_top_sites(cap_stack_site_t *out, size_t max)
{
    if (out == NULL || max == 0)
        return 0;
    size_t n = 0;
    struct kstate *self = kstate();
    busy_begin(self); /* as in cap__linked_stats */
    cap__spin_lock(&lock);
    for (struct kstate *k = registry; k != NULL; k = k->next_registered) {
        for (unsigned i = 0; i < SITES; i++) {
            if (k->sites[i].site == NULL)
                continue;
            size_t j;
            for (j = 0; j < n && out[j].site != k->sites[i].site; j++)
                ;
            if (j < n) {
                out[j].links += k->sites[i].links;
                continue;
            }
            /* Not listed: replace the smallest if full. */
            if (n < max) {
                out[n].site = k->sites[i].site;
                out[n].links = k->sites[i].links;
                n++;
                continue;
            }
            size_t min = 0;
            for (j = 1; j < n; j++)
                if (out[j].links < out[min].links)
                    min = j;
            if (k->sites[i].links > out[min].links) {
                out[min].site = k->sites[i].site;
                out[min].links = k->sites[i].links;
            }
        }
    }
    cap__spin_unlock(&lock);
    busy_end(self);
    for (size_t i = 1; i < n; i++) /* busiest first: insertion sort, n is small */
        for (size_t j = i; j > 0 && out[j].links > out[j - 1].links; j--) {
            cap_stack_site_t tmp = out[j];
            out[j] = out[j - 1];
            out[j - 1] = tmp;
        }
    return n;
}

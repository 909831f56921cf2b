/* SPDX-License-Identifier: MIT */
/*
 * The counters behind cap_disk_stats (include/capriccio/disk.h), one set
 * per worker: written only by the worker's own user threads, with plain
 * relaxed stores (no locked add on the read paths), summed by the reader.
 * A thread not on a worker counts nothing.
 */
#ifndef CAP_IO_DISKSTATS_H
#define CAP_IO_DISKSTATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "runtime/config.h"
#include "sched/worker.h"

enum cap__disk_count {
    CAP__DISK_NOWAIT_HITS,
    CAP__DISK_NOWAIT_SLOW,
    CAP__DISK_NOWAIT_MISSES,
    CAP__DISK_PROBES,
    CAP__DISK_PROBE_MISSES,
    CAP__DISK_HOT_MARKS,
    CAP__DISK_COUNTS
};

struct cap__disk_counts {
    _Atomic uint64_t n[CAP__DISK_COUNTS];
} __attribute__((aligned(64)));

extern struct cap__disk_counts cap__disk_counts[CAP__MAX_WORKERS]
    __attribute__((visibility("hidden")));

static inline void cap__disk_count(enum cap__disk_count c)
{
    cap__worker *w = cap__worker_self();
    if (w == NULL || w->id >= CAP__MAX_WORKERS)
        return;
    _Atomic uint64_t *p = &cap__disk_counts[w->id].n[c];
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

#endif /* CAP_IO_DISKSTATS_H */

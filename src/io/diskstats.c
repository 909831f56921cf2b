/* SPDX-License-Identifier: MIT */
/*
 * cap_disk_stats: the per-worker disk counters (io/diskstats.h) summed.
 */
#include <errno.h>

#include "capriccio.h"
#include "io/diskstats.h"

struct cap__disk_counts cap__disk_counts[CAP__MAX_WORKERS];

int cap_disk_stats(cap_disk_stats_t *out)
{
    if (out == NULL)
        return EINVAL;
    uint64_t sum[CAP__DISK_COUNTS] = { 0 };
    int n = cap_worker_count();
    for (int w = 0; w < n && w < CAP__MAX_WORKERS; w++)
        for (int c = 0; c < CAP__DISK_COUNTS; c++)
            sum[c] += atomic_load_explicit(&cap__disk_counts[w].n[c], memory_order_relaxed);
    *out = (cap_disk_stats_t){
        .nowait_reads = sum[CAP__DISK_NOWAIT_HITS] + sum[CAP__DISK_NOWAIT_SLOW] +
                        sum[CAP__DISK_NOWAIT_MISSES],
        .nowait_hits = sum[CAP__DISK_NOWAIT_HITS],
        .nowait_slow = sum[CAP__DISK_NOWAIT_SLOW],
        .nowait_misses = sum[CAP__DISK_NOWAIT_MISSES],
        .probes = sum[CAP__DISK_PROBES],
        .probe_misses = sum[CAP__DISK_PROBE_MISSES],
        .hot_marks = sum[CAP__DISK_HOT_MARKS],
    };
    return 0;
}

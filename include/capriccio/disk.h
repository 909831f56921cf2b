/* SPDX-License-Identifier: MIT */
/*
 * Disk statistics: how the reads of regular files were served, for
 * tuning and for telling what the page cache and the kernel did
 * (src/io/disk.c, "Hot files"). Included by <capriccio.h>.
 *
 * A read of a file not marked hot first tries preadv2(RWF_NOWAIT), which
 * either returns the data or says EAGAIN (the data is not cached) and
 * goes to the CAP_DISKIO backend, parking the thread. Some kernels and
 * devices (this project's virtual machines among them) make the device
 * read inside that call when it is quick enough and return the data: such
 * a "slow hit" (over 20 us) blocked the worker like a miss under
 * CAP_DISKIO=blocking, and counts as a miss for the hot mark. A file whose
 * reads hit 64 times in a row is marked hot and read with the plain call,
 * every 16th read of a worker being a RWF_NOWAIT probe; a probe that finds
 * the data not cached (EAGAIN, or a slow hit) marks it cold again.
 */
#ifndef CAPRICCIO_DISK_H
#define CAPRICCIO_DISK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cap_disk_stats {
    uint64_t nowait_reads;  /* reads of files not marked hot tried with RWF_NOWAIT
                               that said something: the sum of the next three */
    uint64_t nowait_hits;   /* of those, served from the page cache */
    uint64_t nowait_slow;   /* of those, served after a device read inside the call */
    uint64_t nowait_misses; /* of those, EAGAIN: sent to the backend */
    uint64_t probes;        /* RWF_NOWAIT probes of hot files */
    uint64_t probe_misses;  /* of those, EAGAIN or slow: the file went cold */
    uint64_t hot_marks;     /* times a file was marked hot */
} cap_disk_stats_t;

/* Fills *out with the totals since start (reads by user threads only; a
 * read in progress may be counted or not); EINVAL if out is NULL. */
int cap_disk_stats(cap_disk_stats_t *out);

#ifdef __cplusplus
}
#endif

#endif /* CAPRICCIO_DISK_H */

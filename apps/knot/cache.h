/* SPDX-License-Identifier: MIT */
/* The in-memory file cache, see cache.c. */
#ifndef KNOT_CACHE_H
#define KNOT_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "httpdate.h"

/* At most this many open descriptors are kept (server.c reserves them). */
enum { CACHE_MAX_FILES = 256 };

/* A file's bytes, or an open descriptor of it, plus what a response needs
 * about it. Read-only while a reference is held; the cache frees it (and
 * closes file) after the last release. */
struct cache_entry {
    const char *data;       /* NULL: send file's bytes (sendfile) */
    int file;               /* an open descriptor of the file, or -1 */
    size_t size;
    time_t mtime;           /* Last-Modified, in seconds */
    const char *mime;
    char last_modified[HTTPDATE_LEN + 1]; /* mtime as an IMF-fixdate */
    /* private to cache.c; written on hits: */
    atomic_uint refs;       /* holders, plus one while linked */
    atomic_bool referenced; /* hit since the clock hand last passed */
    _Atomic long long checked_ms; /* knot_now_ms() of the last matching stat */
    /* written under the lock held exclusive: */
    struct cache_entry *lprev, *lnext;
    dev_t dev;
    ino_t ino;
    struct timespec mtim;
    size_t charge;
    bool linked;
    /* what a lookup reads before it has found its entry, together so that
     * an entry passed over in a chain costs one cache line: */
    struct cache_entry *hnext;
    unsigned hash;
    char key[];
};

/* Sets the bound in bytes (0: nothing is kept). Call before any thread. */
void cache_init(size_t max_bytes);

/* A referenced entry for rel if the cache holds one for the same file
 * (device, inode, size, mtime) as st; NULL otherwise, dropping a stale
 * entry. */
struct cache_entry *cache_lookup(const char *rel, const struct stat *st);

/* Builds an entry from data (malloc'd, ownership passes) of the file st,
 * keeps it under rel if it fits the bound, and returns it referenced. NULL
 * only when memory runs out (data is then freed). */
struct cache_entry *cache_insert(const char *rel, const struct stat *st, char *data, size_t size);

/* The same for a file served by sendfile: keeps file, an open descriptor of
 * the file st (ownership passes), instead of its bytes, unless
 * CACHE_MAX_FILES are kept already. Returns it referenced; NULL only when
 * memory runs out (file is then closed). */
struct cache_entry *cache_insert_file(const char *rel, const struct stat *st, int file);

/* A referenced entry for rel if one was found matching its file by a stat
 * less than max_age_ms ago; NULL otherwise (the caller then stats and calls
 * cache_lookup, which renews the entry). No system call. */
struct cache_entry *cache_lookup_recent(const char *rel, long long max_age_ms);

void cache_release(struct cache_entry *e);

/* Drops the entry for rel, if any: its path no longer names a file. */
void cache_drop(const char *rel);

/* Drops e (referenced by the caller) from the cache if it is still there:
 * its file turned out to differ from it (shorter than its size). The
 * caller's reference stays until cache_release. */
void cache_forget(struct cache_entry *e);

#endif /* KNOT_CACHE_H */

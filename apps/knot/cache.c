/* SPDX-License-Identifier: MIT */
/*
 * A byte-bounded cache of whole small files, keyed by the normalised
 * relative path, with second-chance (clock) replacement so that a hit
 * writes nothing shared but the entry's reference count. Bytes charged per
 * entry: the file size plus the key and the struct.
 *
 * Locking: `lock` is a read-write lock. A hit takes it shared: find the
 * entry, take a reference, set its `referenced` bit (only if clear, so a
 * popular entry's line is not written on every hit); hits on both workers
 * (or CPUs) never wait for each other, and one preempted mid-lookup holds
 * up nobody. Anything that changes the table or the list takes it
 * exclusive: an insert (a miss), an eviction, dropping a stale entry.
 *
 * Files served by sendfile are kept as an open descriptor instead of their
 * bytes (charged the struct and key only; at most CACHE_MAX_FILES of them),
 * as nginx's open_file_cache does, so a hit costs no open, fstat or close.
 * A descriptor follows its inode: same_file's check against a fresh stat
 * of the path (or the --cache-check window) decides when it is dropped.
 *
 * Replacement: entries sit on a list, newest at the front. To make room,
 * the oldest is looked at: if it was hit since it was last looked at, its
 * bit is cleared and it moves to the front (its second chance), otherwise
 * it is evicted. This approximates LRU as CLOCK does, at no cost per hit.
 *
 * Invariants, under `lock` held exclusive (or shared, for reading):
 *   - an entry is `linked` iff it is both in the hash table and on the
 *     list, and `used` is the sum of the charges of linked entries;
 *   - refs counts the responses holding the entry plus one while it is
 *     linked; whoever drops it to 0 frees the entry, so a response may keep
 *     sending an entry that was evicted meanwhile. A lookup takes its
 *     reference under the lock (shared) from a linked entry, which cannot
 *     be unlinked meanwhile (that needs the lock exclusive), so releasing
 *     needs only an atomic decrement, not the lock.
 * Validity: an entry is only ever created from a file opened through
 * path_open (confined to the root); a lookup matches only if a fresh stat of
 * the same path still shows the same inode, size and mtime, so an edited or
 * replaced file is re-read, and a path redirected elsewhere misses. With
 * --cache-check, cache_lookup_recent skips that stat for an entry that
 * matched one less than that long ago (checked_ms), as nginx's
 * open_file_cache_valid does: an edit then shows within that time.
 * The lock is never held across I/O: readers read the file first and insert
 * after, so two threads may read the same file at once; the later insert
 * replaces the earlier.
 */
#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knot.h"
#include "mime.h"

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static size_t max_bytes, used;
static struct cache_entry **table;
static size_t nbuckets, nlinked; /* nbuckets: 0 or a power of two */
static size_t nfiles; /* linked entries that hold a descriptor */
static struct cache_entry lru = { .lprev = &lru, .lnext = &lru }; /* front: newest */

void cache_init(size_t bytes)
{
    max_bytes = bytes;
}

static unsigned hash_key(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* h's chain; the table must exist. A mask, not a division: a lookup does
 * this on every request. */
static struct cache_entry **bucket(struct cache_entry **t, size_t n, unsigned h)
{
    return &t[h & (n - 1)];
}

static bool same_file(const struct cache_entry *e, const struct stat *st)
{
    return e->dev == st->st_dev && e->ino == st->st_ino && (off_t)e->size == st->st_size &&
           e->mtim.tv_sec == st->st_mtim.tv_sec && e->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static void lru_remove(struct cache_entry *e)
{
    e->lprev->lnext = e->lnext;
    e->lnext->lprev = e->lprev;
}

static void lru_push_front(struct cache_entry *e)
{
    e->lnext = lru.lnext;
    e->lprev = &lru;
    lru.lnext->lprev = e;
    lru.lnext = e;
}

static void entry_free(struct cache_entry *e)
{
    if (e->file >= 0)
        close(e->file);
    free((void *)e->data);
    free(e);
}

/* Removes e from the table and the list; frees it if unreferenced. */
static void unlink_entry(struct cache_entry *e)
{
    struct cache_entry **pp = bucket(table, nbuckets, e->hash);
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_remove(e);
    e->linked = false;
    used -= e->charge;
    nlinked--;
    nfiles -= e->file >= 0;
    cache_release(e); /* the table's reference */
}

static struct cache_entry *find(const char *rel, unsigned h)
{
    if (!nbuckets)
        return NULL;
    for (struct cache_entry *e = *bucket(table, nbuckets, h); e; e = e->hnext)
        if (e->hash == h && !strcmp(e->key, rel))
            return e;
    return NULL;
}

/* Doubles the table when it gets denser than one entry per bucket. A failed
 * allocation just leaves the chains longer. */
static void maybe_grow(void)
{
    if (nlinked < nbuckets)
        return;
    size_t n = nbuckets ? nbuckets * 2 : 1024;
    struct cache_entry **t = calloc(n, sizeof *t);
    if (!t)
        return;
    for (size_t i = 0; i < nbuckets; i++)
        for (struct cache_entry *e = table[i], *next; e; e = next) {
            next = e->hnext;
            e->hnext = *bucket(t, n, e->hash);
            *bucket(t, n, e->hash) = e;
        }
    free(table);
    table = t;
    nbuckets = n;
}

/* Makes room for charge more bytes: the oldest entry goes unless it was
 * hit since it was last looked at, in which case it gets a second chance
 * at the front. Every entry is looked at most twice. Lock held exclusive. */
static void evict_for(size_t charge)
{
    while (used + charge > max_bytes && nlinked > 0) {
        struct cache_entry *old = lru.lprev;
        if (atomic_load_explicit(&old->referenced, memory_order_relaxed)) {
            atomic_store_explicit(&old->referenced, false, memory_order_relaxed);
            lru_remove(old);
            lru_push_front(old);
        } else {
            unlink_entry(old);
        }
    }
}

/* A hit: a reference for the caller and the second-chance bit. Lock held,
 * shared or exclusive. */
static void hit(struct cache_entry *e)
{
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    if (!atomic_load_explicit(&e->referenced, memory_order_relaxed))
        atomic_store_explicit(&e->referenced, true, memory_order_relaxed);
}

struct cache_entry *cache_lookup_recent(const char *rel, long long max_age_ms)
{
    unsigned h = hash_key(rel);
    long long now = knot_now_ms();
    pthread_rwlock_rdlock(&lock);
    struct cache_entry *e = find(rel, h);
    if (e && now - atomic_load_explicit(&e->checked_ms, memory_order_relaxed) < max_age_ms)
        hit(e);
    else
        e = NULL;
    pthread_rwlock_unlock(&lock);
    return e;
}

struct cache_entry *cache_lookup(const char *rel, const struct stat *st)
{
    unsigned h = hash_key(rel);
    pthread_rwlock_rdlock(&lock);
    struct cache_entry *e = find(rel, h);
    bool stale = e && !same_file(e, st);
    if (e && !stale) {
        hit(e);
        if (knot_config.cache_check_ms) {
            long long now = knot_now_ms();
            if (atomic_load_explicit(&e->checked_ms, memory_order_relaxed) != now)
                atomic_store_explicit(&e->checked_ms, now, memory_order_relaxed);
        }
    }
    pthread_rwlock_unlock(&lock);
    if (!stale)
        return e;

    /* Drop the stale entry, if nobody has replaced or dropped it since. */
    pthread_rwlock_wrlock(&lock);
    e = find(rel, h);
    if (e && !same_file(e, st))
        unlink_entry(e);
    pthread_rwlock_unlock(&lock);
    return NULL;
}

/* A fresh entry for rel and the file st, holding nothing yet, referenced
 * once (the caller's); NULL if out of memory. */
static struct cache_entry *entry_new(const char *rel, const struct stat *st)
{
    size_t keylen = strlen(rel);
    struct cache_entry *e = malloc(sizeof *e + keylen + 1);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    memcpy(e->key, rel, keylen + 1);
    e->file = -1;
    e->mtime = st->st_mtim.tv_sec;
    httpdate_format(e->mtime, e->last_modified);
    e->mime = mime_type(rel);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->mtim = st->st_mtim;
    e->hash = hash_key(rel);
    e->charge = sizeof *e + keylen + 1;
    atomic_init(&e->refs, 1);
    atomic_init(&e->referenced, false);
    atomic_init(&e->checked_ms, knot_now_ms()); /* st is the caller's fresh fstat */
    return e;
}

/* Links e in place of any entry for its key, evicting for room; returns e. */
static struct cache_entry *keep(struct cache_entry *e)
{
    if (e->charge > max_bytes)
        return e; /* too big: serve once, keep nothing */
    pthread_rwlock_wrlock(&lock);
    struct cache_entry *old = find(e->key, e->hash);
    if (old)
        unlink_entry(old);
    if (e->file >= 0 && nfiles >= CACHE_MAX_FILES) {
        pthread_rwlock_unlock(&lock);
        return e;
    }
    evict_for(e->charge);
    maybe_grow();
    if (nbuckets) {
        e->hnext = *bucket(table, nbuckets, e->hash);
        *bucket(table, nbuckets, e->hash) = e;
        lru_push_front(e);
        e->linked = true;
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        used += e->charge;
        nlinked++;
        nfiles += e->file >= 0;
    }
    pthread_rwlock_unlock(&lock);
    return e;
}

struct cache_entry *cache_insert(const char *rel, const struct stat *st, char *data, size_t size)
{
    struct cache_entry *e = entry_new(rel, st);
    if (!e) {
        free(data);
        return NULL;
    }
    e->data = data;
    e->size = size;
    e->charge += size;
    if ((off_t)size != st->st_size)
        return e; /* changed while read: serve once, keep nothing */
    return keep(e);
}

struct cache_entry *cache_insert_file(const char *rel, const struct stat *st, int file)
{
    struct cache_entry *e = entry_new(rel, st);
    if (!e) {
        close(file);
        return NULL;
    }
    e->file = file;
    e->size = (size_t)st->st_size;
    return keep(e);
}

void cache_release(struct cache_entry *e)
{
    /* acq_rel: the freeing thread must see every other holder done with it. */
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
        entry_free(e);
}

void cache_drop(const char *rel)
{
    unsigned h = hash_key(rel);
    pthread_rwlock_rdlock(&lock);
    bool there = find(rel, h) != NULL;
    pthread_rwlock_unlock(&lock);
    if (!there)
        return;
    pthread_rwlock_wrlock(&lock);
    struct cache_entry *e = find(rel, h);
    if (e)
        unlink_entry(e);
    pthread_rwlock_unlock(&lock);
}

void cache_forget(struct cache_entry *e)
{
    pthread_rwlock_wrlock(&lock);
    if (e->linked)
        unlink_entry(e);
    pthread_rwlock_unlock(&lock);
}

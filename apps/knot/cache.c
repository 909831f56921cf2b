/* SPDX-License-Identifier: MIT */
/*
 * A byte-bounded LRU cache of whole small files, keyed by the normalised
 * relative path. Bytes charged per entry: the file size plus the key and
 * the struct. Invariants, all under `lock`:
 *   - an entry is `linked` iff it is both in the hash table and on the LRU
 *     list, and `used` is the sum of the charges of linked entries;
 *   - refs counts the responses holding the entry plus one while it is
 *     linked; whoever drops it to 0 frees the entry, so a response may keep
 *     sending an entry that was evicted meanwhile. A lookup takes its
 *     reference under the lock from a linked entry (refs >= 1 then), so
 *     releasing needs only an atomic decrement, not the lock: one lock
 *     round per cache hit instead of two.
 * Validity: an entry is only ever created from a file opened through
 * path_open (confined to the root); a lookup matches only if a fresh stat of
 * the same path still shows the same inode, size and mtime, so an edited or
 * replaced file is re-read, and a path redirected elsewhere misses.
 * The lock is never held across I/O: readers read the file first and insert
 * after, so two threads may read the same file at once; the later insert
 * replaces the earlier.
 */
#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mime.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t max_bytes, used;
static struct cache_entry **table;
static size_t nbuckets, nlinked;
static struct cache_entry lru = { .lprev = &lru, .lnext = &lru }; /* head: most recent */

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
    free((void *)e->data);
    free(e);
}

/* Removes e from the table and the list; frees it if unreferenced. */
static void unlink_entry(struct cache_entry *e)
{
    struct cache_entry **pp = &table[e->hash % nbuckets];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_remove(e);
    e->linked = false;
    used -= e->charge;
    nlinked--;
    cache_release(e); /* the table's reference */
}

static struct cache_entry *find(const char *rel, unsigned h)
{
    if (!nbuckets)
        return NULL;
    for (struct cache_entry *e = table[h % nbuckets]; e; e = e->hnext)
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
            e->hnext = t[e->hash % n];
            t[e->hash % n] = e;
        }
    free(table);
    table = t;
    nbuckets = n;
}

struct cache_entry *cache_lookup(const char *rel, const struct stat *st)
{
    unsigned h = hash_key(rel);
    pthread_mutex_lock(&lock);
    struct cache_entry *e = find(rel, h);
    if (e && !same_file(e, st)) {
        unlink_entry(e);
        e = NULL;
    }
    if (e) {
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        lru_remove(e);
        lru_push_front(e);
    }
    pthread_mutex_unlock(&lock);
    return e;
}

struct cache_entry *cache_insert(const char *rel, const struct stat *st, char *data, size_t size)
{
    size_t keylen = strlen(rel);
    struct cache_entry *e = malloc(sizeof *e + keylen + 1);
    if (!e) {
        free(data);
        return NULL;
    }
    memset(e, 0, sizeof *e);
    memcpy(e->key, rel, keylen + 1);
    e->data = data;
    e->size = size;
    e->mtime = st->st_mtim.tv_sec;
    e->mime = mime_type(rel);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->mtim = st->st_mtim;
    e->hash = hash_key(rel);
    e->charge = size + sizeof *e + keylen + 1;
    atomic_init(&e->refs, 1);
    if ((off_t)size != st->st_size || e->charge > max_bytes)
        return e; /* changed while read, or too big: serve once, keep nothing */

    pthread_mutex_lock(&lock);
    struct cache_entry *old = find(rel, e->hash);
    if (old)
        unlink_entry(old);
    while (used + e->charge > max_bytes)
        unlink_entry(lru.lprev); /* the least recently used */
    maybe_grow();
    if (nbuckets) {
        e->hnext = table[e->hash % nbuckets];
        table[e->hash % nbuckets] = e;
        lru_push_front(e);
        e->linked = true;
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        used += e->charge;
        nlinked++;
    }
    pthread_mutex_unlock(&lock);
    return e;
}

void cache_release(struct cache_entry *e)
{
    /* acq_rel: the freeing thread must see every other holder done with it. */
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
        entry_free(e);
}

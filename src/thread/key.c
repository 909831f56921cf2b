/* SPDX-License-Identifier: MIT */
/*
 * Thread-specific data.
 *
 * A global table of CAP_KEYS_MAX key slots, each with a destructor and a
 * sequence number that changes on every create and delete. A thread keeps
 * (value, seq) pairs in an array it grows on first use; a value counts
 * only while its seq matches the key's, so a deleted key's values vanish
 * at once from every thread without visiting them, and a reused slot never
 * shows an old value. Odd seq = key live.
 */
#include <errno.h>
#include <stdlib.h>

#include "sched/park.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/spin.h"

struct key_slot {
    _Atomic uint32_t seq;
    void (*destructor)(void *);
};

struct key_value {
    void *value;
    uint32_t seq;
};

static struct key_slot keys[CAP_KEYS_MAX];
static cap__spin keys_lock = CAP__SPIN_INIT;

static bool key_live(cap_key_t k, uint32_t *seq)
{
    if (k >= CAP_KEYS_MAX)
        return false;
    *seq = atomic_load_explicit(&keys[k].seq, memory_order_acquire);
    return (*seq & 1) != 0;
}

int cap_key_create(cap_key_t *key, void (*destructor)(void *))
{
    if (key == NULL)
        return EINVAL;
    cap__spin_lock(&keys_lock);
    for (cap_key_t k = 0; k < CAP_KEYS_MAX; k++) {
        uint32_t seq = atomic_load(&keys[k].seq);
        if ((seq & 1) == 0) {
            keys[k].destructor = destructor;
            atomic_store_explicit(&keys[k].seq, seq + 1, memory_order_release);
            cap__spin_unlock(&keys_lock);
            *key = k;
            return 0;
        }
    }
    cap__spin_unlock(&keys_lock);
    return EAGAIN;
}

int cap_key_delete(cap_key_t key)
{
    uint32_t seq;
    cap__spin_lock(&keys_lock);
    if (!key_live(key, &seq)) {
        cap__spin_unlock(&keys_lock);
        return EINVAL;
    }
    atomic_store_explicit(&keys[key].seq, seq + 1, memory_order_release);
    keys[key].destructor = NULL;
    cap__spin_unlock(&keys_lock);
    return 0;
}

void *cap_getspecific(cap_key_t key)
{
    cap__thread *self = cap__current();
    uint32_t seq;
    if (self == NULL || !key_live(key, &seq) || key >= self->nkeys)
        return NULL;
    struct key_value *kv = (struct key_value *)self->keys + key;
    return kv->seq == seq ? kv->value : NULL;
}

int cap_setspecific(cap_key_t key, const void *value)
{
    cap__thread *self = cap__current();
    uint32_t seq;
    if (self == NULL)
        return EPERM;
    if (!key_live(key, &seq))
        return EINVAL;
    if (key >= self->nkeys) {
        uint32_t n = (key + 32) & ~31u;
        struct key_value *grown = realloc(self->keys, n * sizeof *grown);
        if (grown == NULL)
            return ENOMEM;
        for (uint32_t i = self->nkeys; i < n; i++)
            grown[i] = (struct key_value){ NULL, 0 };
        self->keys = (void **)grown;
        self->nkeys = n;
    }
    struct key_value *kv = (struct key_value *)self->keys + key;
    kv->value = (void *)value;
    kv->seq = seq;
    return 0;
}

void cap__keys_run_destructors(cap__thread *self)
{
    if (self->keys == NULL)
        return; /* never set a key: most threads */
    struct key_value *kvs = (struct key_value *)self->keys;
    for (int round = 0; round < CAP_DESTRUCTOR_ITERATIONS; round++) {
        bool ran = false;
        for (uint32_t k = 0; k < self->nkeys; k++) {
            uint32_t seq;
            if (kvs[k].value == NULL || !key_live(k, &seq) || kvs[k].seq != seq)
                continue;
            void (*destructor)(void *) = keys[k].destructor;
            void *value = kvs[k].value;
            kvs[k].value = NULL;
            if (destructor != NULL) {
                destructor(value);
                ran = true;
                kvs = (struct key_value *)self->keys; /* a destructor may grow it */
            }
        }
        if (!ran)
            break;
    }
}

void cap__keys_free(cap__thread *t)
{
    if (t->keys == NULL)
        return;
    free(t->keys);
    t->keys = NULL;
    t->nkeys = 0;
}

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
 *
 * A kernel thread the library does not run (the offload pool's, one made
 * through glibc's own pthread_create found by dlsym, as jemalloc makes its
 * background thread, or a worker's scheduler running a handler with no
 * thread) keeps such an array in its own TLS; glibc runs the destructors
 * when it ends (__cxa_thread_atexit_impl, registered at its first value).
 * Before, such a thread's set failed with EPERM (jemalloc: "Error setting
 * tsd" at each start of a Redis built with the header).
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

/* Where the calling kernel thread's values are when it runs no thread of
 * ours (above). */
static __thread void **foreign_keys __attribute__((tls_model("initial-exec")));
static __thread uint32_t foreign_nkeys __attribute__((tls_model("initial-exec")));
static __thread bool foreign_exit_set __attribute__((tls_model("initial-exec")));

/* glibc's registration of a destructor run as the calling kernel thread
 * ends (what C++ thread_local objects use). */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

void *cap_getspecific(cap_key_t key)
{
    cap__thread *self = cap__current();
    void **values = self != NULL ? self->keys : foreign_keys;
    uint32_t n = self != NULL ? self->nkeys : foreign_nkeys;
    uint32_t seq;
    if (!key_live(key, &seq) || key >= n)
        return NULL;
    struct key_value *kv = (struct key_value *)values + key;
    return kv->seq == seq ? kv->value : NULL;
}

static void run_destructors(void ***values, const uint32_t *n)
{
    if (*values == NULL)
        return; /* never set a key: most threads */
    for (int round = 0; round < CAP_DESTRUCTOR_ITERATIONS; round++) {
        bool ran = false;
        for (uint32_t k = 0; k < *n; k++) {
            struct key_value *kv = (struct key_value *)*values + k;
            uint32_t seq;
            if (kv->value == NULL || !key_live(k, &seq) || kv->seq != seq)
                continue;
            void (*destructor)(void *) = keys[k].destructor;
            void *value = kv->value;
            kv->value = NULL;
            if (destructor != NULL) {
                destructor(value); /* it may grow the array: looked up again */
                ran = true;
            }
        }
        if (!ran)
            break;
    }
}

/* A kernel thread of foreign_keys is ending. */
static void foreign_exit(void *arg)
{
    (void)arg;
    run_destructors(&foreign_keys, &foreign_nkeys);
    free(foreign_keys);
    foreign_keys = NULL;
    foreign_nkeys = 0;
    foreign_exit_set = false;
}

int cap_setspecific(cap_key_t key, const void *value)
{
    cap__thread *self = cap__current();
    void ***values = self != NULL ? &self->keys : &foreign_keys;
    uint32_t *n = self != NULL ? &self->nkeys : &foreign_nkeys;
    uint32_t seq;
    if (!key_live(key, &seq))
        return EINVAL;
    if (self == NULL && !foreign_exit_set && value != NULL) {
        if (__cxa_thread_atexit_impl(foreign_exit, NULL, &__dso_handle) != 0)
            return ENOMEM;
        foreign_exit_set = true;
    }
    if (key >= *n) {
        uint32_t grow = (key + 32) & ~31u;
        struct key_value *grown = realloc(*values, grow * sizeof *grown);
        if (grown == NULL)
            return ENOMEM;
        for (uint32_t i = *n; i < grow; i++)
            grown[i] = (struct key_value){ NULL, 0 };
        *values = (void **)grown;
        *n = grow;
    }
    struct key_value *kv = (struct key_value *)*values + key;
    kv->value = (void *)value;
    kv->seq = seq;
    return 0;
}

void cap__keys_run_destructors(cap__thread *self)
{
    run_destructors(&self->keys, &self->nkeys);
}

void cap__keys_free(cap__thread *t)
{
    if (t->keys == NULL)
        return;
    free(t->keys);
    t->keys = NULL;
    t->nkeys = 0;
}

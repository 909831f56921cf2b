/* SPDX-License-Identifier: MIT */
/*
 * glibc's thread-specific data (pthread_key_*, pthread_getspecific,
 * pthread_setspecific, and C11's tss_*) per user thread.
 *
 * glibc keeps a key's values per kernel thread: every user thread of a
 * worker would see, and overwrite, the same value, and a thread that
 * moved to another worker (CAP_MIGRATE) would find another's. Code built
 * against glibc's <pthread.h> keeps per-thread state this way (OpenSSL's
 * error queue, for one), so a user thread must have its own values.
 *
 * Each glibc key is created in glibc too (so threads the library does not
 * run keep using glibc's values, and key numbers stay glibc's) and paired
 * with a key of the library's own (thread/key.c), which holds the user
 * threads' values and runs the destructor when a user thread exits. The
 * pair lives in cap_key_of, written before the key is returned and
 * cleared before glibc frees the number. So the glibc keys and the library's
 * cap_key_create keys (the header's pthread_key_create) share
 * CAP_KEYS_MAX.
 *
 * A key created before start-up stays glibc's alone, per kernel thread:
 * its creator runs before the library's constructor, as a sanitizer's
 * runtime does (AddressSanitizer finds its record of the current thread
 * in such a key, on every thread, including the worker running a user
 * thread: a pair made it find nothing on user threads).
 *
 * The main thread ran as a plain kernel thread before start-up, where
 * constructors may have set values in glibc: while it has set none of its
 * own for a key, it reads glibc's value of that key on its kernel thread.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <threads.h>

#include "intercept/intercept.h"
#include "sched/worker.h"

/* For each glibc key, 1 + the library's key paired with it (0: none). */
static _Atomic uint32_t cap_key_of[PTHREAD_KEYS_MAX];

_Static_assert(PTHREAD_KEYS_MAX <= CAP_KEYS_MAX, "every glibc key can be paired");
_Static_assert(sizeof(tss_t) == sizeof(pthread_key_t), "C11 keys are glibc's keys");

/* The library's key paired with key, or -1. */
static long paired(pthread_key_t key)
{
    if (key >= PTHREAD_KEYS_MAX)
        return -1;
    uint32_t c = atomic_load_explicit(&cap_key_of[key], memory_order_acquire);
    return c != 0 ? (long)c - 1 : -1;
}

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
    int rc = CAP__REAL(pthread_key_create)(key, destructor);
    if (rc != 0 || *key >= PTHREAD_KEYS_MAX)
        return rc;
    if (__atomic_load_n(&cap__rt.nworkers, __ATOMIC_ACQUIRE) == 0)
        return 0; /* before start-up: glibc's alone (see the top) */
    cap_key_t c;
    rc = cap_key_create(&c, destructor);
    if (rc != 0) {
        CAP__REAL(pthread_key_delete)(*key);
        return rc;
    }
    atomic_store_explicit(&cap_key_of[*key], (uint32_t)c + 1, memory_order_release);
    return 0;
}

/* The pair is undone before glibc's delete: once glibc frees the number,
 * a pthread_key_create elsewhere may get it and pair it anew. */
int pthread_key_delete(pthread_key_t key)
{
    uint32_t c = key < PTHREAD_KEYS_MAX ? atomic_exchange(&cap_key_of[key], 0) : 0;
    int rc = CAP__REAL(pthread_key_delete)(key);
    if (c != 0)
        cap_key_delete(c - 1); /* paired, so glibc's key was live: rc is 0 */
    return rc;
}

void *pthread_getspecific(pthread_key_t key)
{
    cap__thread *self = cap__current();
    long c = paired(key);
    if (self == NULL || c < 0)
        return CAP__REAL(pthread_getspecific)(key);
    void *v = cap_getspecific((cap_key_t)c);
    if (v == NULL && self->is_main)
        v = CAP__REAL(pthread_getspecific)(key); /* set before start-up */
    return v;
}

/* glibc declares value access(none) (never dereferenced), and GCC then
 * takes its passing to cap_setspecific's const pointer for a read of
 * memory that may be uninitialized. */
#pragma GCC diagnostic push
#ifndef __clang__ /* a warning of GCC's only */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
int pthread_setspecific(pthread_key_t key, const void *value)
{
    cap__thread *self = cap__current();
    long c = paired(key);
    if (self == NULL || c < 0)
        return CAP__REAL(pthread_setspecific)(key, value);
    int rc = cap_setspecific((cap_key_t)c, value);
    if (rc == 0 && self->is_main)
        CAP__REAL(pthread_setspecific)(key, NULL); /* its own from now on */
    return rc;
}
#pragma GCC diagnostic pop

int tss_create(tss_t *key, tss_dtor_t destructor)
{
    return pthread_key_create(key, destructor) == 0 ? thrd_success : thrd_error;
}

void tss_delete(tss_t key)
{
    pthread_key_delete(key);
}

void *tss_get(tss_t key)
{
    return pthread_getspecific(key);
}

int tss_set(tss_t key, void *value)
{
    return pthread_setspecific(key, value) == 0 ? thrd_success : thrd_error;
}

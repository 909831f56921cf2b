/* SPDX-License-Identifier: MIT */
/* Description: C11's <threads.h> locks and sleep on user threads. glibc
 * makes mtx_*, cnd_* and thrd_sleep through its internal names, which no
 * wrapper of the pthread names sees, so they slept the worker: a user
 * thread waiting in mtx_lock for a mutex whose holder was parked (in a
 * read), one in cnd_wait, and one in thrd_sleep each stopped every other
 * thread of their worker (with one worker the first case hung). Now they
 * park: while they wait another thread runs. Also: mtx_timedlock says
 * thrd_timedout, mtx_trylock thrd_busy, cnd_timedwait thrd_timedout, and
 * a recursive mtx is taken twice by its holder. */
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>

#include "util.h"

static mtx_t m;
static cnd_t c;
static int pipefd[2];
static atomic_int holding, got, ticks;
static int ready; /* [m] */

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(mtx_lock(&m), thrd_success);
    atomic_store(&holding, 1);
    char ch;
    CHECK_EQ(read(pipefd[0], &ch, 1), 1); /* parks, holding m */
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(mtx_unlock(&m), thrd_success);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(mtx_lock(&m), thrd_success);
    atomic_store(&got, 1);
    CHECK_EQ(mtx_unlock(&m), thrd_success);
    return NULL;
}

static void *ticker(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ticks, 1);
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    CHECK_EQ(mtx_lock(&m), thrd_success);
    ready = 1;
    CHECK_EQ(cnd_signal(&c), thrd_success);
    CHECK_EQ(mtx_unlock(&m), thrd_success);
    return NULL;
}

int main(void)
{
    CHECK_EQ(mtx_init(&m, mtx_timed), thrd_success);
    CHECK_EQ(cnd_init(&c), thrd_success);
    CHECK_EQ(pipe(pipefd), 0);

    /* mtx_lock parks while the holder is parked */
    cap_thread_t h = spawn(holder, NULL);
    while (!atomic_load(&holding))
        cap_yield();
    CHECK_EQ(mtx_trylock(&m), thrd_busy);
    struct timespec abs = ts_after(CLOCK_REALTIME, 20);
    CHECK_EQ(mtx_timedlock(&m, &abs), thrd_timedout);
    cap_thread_t w = spawn(waiter, NULL);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* the waiter waits for m meanwhile */
    join(spawn(ticker, NULL));
    CHECK_EQ(atomic_load(&ticks), 1);
    CHECK_EQ(write(pipefd[1], "x", 1), 1);
    join(h);
    join(w);
    CHECK_EQ(atomic_load(&got), 1);

    /* cnd_timedwait times out; cnd_wait parks until signalled */
    CHECK_EQ(mtx_lock(&m), thrd_success);
    abs = ts_after(CLOCK_REALTIME, 20);
    CHECK_EQ(cnd_timedwait(&c, &m, &abs), thrd_timedout);
    cap_thread_t s = spawn(signaller, NULL);
    while (!ready)
        CHECK_EQ(cnd_wait(&c, &m), thrd_success);
    CHECK_EQ(mtx_unlock(&m), thrd_success);
    join(s);

    /* thrd_sleep parks: another thread runs meanwhile */
    cap_thread_t t = spawn(ticker, NULL);
    struct timespec nap = { 0, 20 * 1000 * 1000 };
    CHECK_EQ(thrd_sleep(&nap, NULL), 0);
    if (cap_worker_count() == 1) /* queued before the sleep, on this worker */
        CHECK_EQ(atomic_load(&ticks), 2);
    join(t);
    CHECK_EQ(atomic_load(&ticks), 2);

    /* a recursive mtx */
    mtx_t r;
    CHECK_EQ(mtx_init(&r, mtx_plain | mtx_recursive), thrd_success);
    CHECK_EQ(mtx_lock(&r), thrd_success);
    CHECK_EQ(mtx_lock(&r), thrd_success);
    CHECK_EQ(mtx_unlock(&r), thrd_success);
    CHECK_EQ(mtx_unlock(&r), thrd_success);
    mtx_destroy(&r);
    cnd_destroy(&c);
    mtx_destroy(&m);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_cond_t and pthread_mutex_t (code built
 * with <pthread.h>) shared between user threads and kernel threads the
 * library does not run (made with glibc's pthread_create, as a
 * third-party library makes them: "foreign" threads). Cases: a foreign
 * thread waits and a user thread signals; user threads wait and a
 * foreign thread signals one, then broadcasts to the rest, only after a
 * user thread spawned behind the waiters has run; a foreign thread waits
 * with a RECURSIVE mutex held two deep (a user thread locks it
 * meanwhile; two unlocks after, then EPERM); a foreign thread's timed
 * waits end with ETIMEDOUT, not early; producers and consumers with
 * exact counts (2 foreign producers and 50 user consumers, then 50 user
 * producers and 2 foreign consumers, each item consumed exactly once); a
 * foreign thread holds the mutex while user threads wait for it and does
 * not let go until a user thread spawned behind them has run (at times
 * every user thread is parked with no timer due, waiting for a foreign
 * thread: the library must not report a deadlock). Before the
 * library wrapped glibc's names a user thread waiting there slept in
 * glibc on its worker: with one worker the user thread that had to run
 * never did, and the program hung. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "util.h"

static pthread_t foreign(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

/* A foreign thread's last step: *done to 1, then it stays until a user
 * thread has seen that (foreign_join). So no foreign thread ends just
 * after a wake-up it made; libc_sem_foreign_poster_exits.c covers that. */
static void foreign_end(atomic_int *done)
{
    atomic_store(done, 1);
    while (atomic_load(done) != 2)
        usleep(1000);
}

/* Joins a foreign thread once it has reached foreign_end: glibc's join
 * would hold the worker while it waits. */
static void foreign_join(pthread_t t, atomic_int *done)
{
    while (atomic_load(done) != 1)
        cap_sleep_ns(1000000);
    atomic_store(done, 2);
    CHECK_EQ(pthread_join(t, NULL), 0);
}

/* For foreign threads: until *flag >= want. */
static void foreign_until(atomic_int *flag, int want)
{
    while (atomic_load(flag) < want)
        usleep(1000);
}

/* ---- a foreign thread waits, a user thread signals ------------------- */

static pthread_mutex_t am = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ac = PTHREAD_COND_INITIALIZER;
static int a_flag;                  /* under am */
static atomic_int a_waiting, a_done;

static void *a_foreign(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&am), 0);
    atomic_store(&a_waiting, 1);
    while (!a_flag)
        CHECK_EQ(pthread_cond_wait(&ac, &am), 0);
    a_flag = 2;
    CHECK_EQ(pthread_mutex_unlock(&am), 0);
    foreign_end(&a_done);
    return NULL;
}

static void check_foreign_waits(void)
{
    pthread_t f = foreign(a_foreign, NULL);
    while (!atomic_load(&a_waiting))
        cap_sleep_ns(1000000);
    CHECK_EQ(pthread_mutex_lock(&am), 0); /* once the foreign thread waits */
    a_flag = 1;
    CHECK_EQ(pthread_cond_signal(&ac), 0);
    CHECK_EQ(pthread_mutex_unlock(&am), 0);
    foreign_join(f, &a_done);
    CHECK_EQ(a_flag, 2);
}

/* ---- user threads wait, a foreign thread signals and broadcasts ------ */

enum { B_WAITERS = 5 };
static pthread_mutex_t bm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bc = PTHREAD_COND_INITIALIZER;
static int b_tokens, b_waiting; /* under bm */
static atomic_int b_woken, b_bystander, b_done;

static void *b_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&bm), 0);
    b_waiting++;
    while (b_tokens == 0)
        CHECK_EQ(pthread_cond_wait(&bc, &bm), 0);
    b_tokens--;
    atomic_fetch_add(&b_woken, 1);
    CHECK_EQ(pthread_mutex_unlock(&bm), 0);
    return NULL;
}

static void *b_bystander_fn(void *arg)
{
    (void)arg;
    atomic_store(&b_bystander, 1);
    return NULL;
}

static void *b_foreign(void *arg)
{
    (void)arg;
    foreign_until(&b_bystander, 1);
    for (;;) { /* until every waiter is inside its wait */
        CHECK_EQ(pthread_mutex_lock(&bm), 0);
        int n = b_waiting;
        if (n == B_WAITERS)
            break;
        CHECK_EQ(pthread_mutex_unlock(&bm), 0);
        usleep(1000);
    }
    CHECK_EQ(atomic_load(&b_woken), 0);
    b_tokens = 1;
    CHECK_EQ(pthread_cond_signal(&bc), 0);
    CHECK_EQ(pthread_mutex_unlock(&bm), 0);
    foreign_until(&b_woken, 1);
    CHECK_EQ(pthread_mutex_lock(&bm), 0);
    CHECK_EQ(b_tokens, 0);
    b_tokens = B_WAITERS - 1;
    CHECK_EQ(pthread_cond_broadcast(&bc), 0);
    CHECK_EQ(pthread_mutex_unlock(&bm), 0);
    foreign_until(&b_woken, B_WAITERS);
    foreign_end(&b_done);
    return NULL;
}

static void check_user_threads_wait(void)
{
    cap_thread_t w[B_WAITERS];
    for (int i = 0; i < B_WAITERS; i++)
        w[i] = spawn(b_waiter, NULL);
    pthread_t f = foreign(b_foreign, NULL);
    cap_thread_t b = spawn(b_bystander_fn, NULL); /* runs behind the waiters */
    join(b);
    for (int i = 0; i < B_WAITERS; i++)
        join(w[i]);
    foreign_join(f, &b_done);
    CHECK_EQ(atomic_load(&b_woken), B_WAITERS);
    CHECK_EQ(b_tokens, 0);
}

/* ---- a foreign thread waits with a RECURSIVE mutex two deep ---------- */

static pthread_mutex_t rm;
static pthread_cond_t rc = PTHREAD_COND_INITIALIZER;
static int r_flag; /* under rm */
static atomic_int r_waiting, r_done;

static void *r_foreign(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    atomic_store(&r_waiting, 1);
    while (!r_flag)
        CHECK_EQ(pthread_cond_wait(&rc, &rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), EPERM);
    foreign_end(&r_done);
    return NULL;
}

static void check_foreign_recursive(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
    CHECK_EQ(pthread_mutex_init(&rm, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    pthread_t f = foreign(r_foreign, NULL);
    while (!atomic_load(&r_waiting))
        cap_sleep_ns(1000000);
    CHECK_EQ(pthread_mutex_lock(&rm), 0); /* only if the wait let go entirely */
    r_flag = 1;
    CHECK_EQ(pthread_cond_signal(&rc), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    foreign_join(f, &r_done);
    CHECK_EQ(pthread_mutex_trylock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_destroy(&rm), 0);
}

/* ---- a foreign thread's timed waits ---------------------------------- */

static atomic_int t_done;

static void *t_foreign(void *arg)
{
    (void)arg;
    pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t real = PTHREAD_COND_INITIALIZER, mono;
    pthread_condattr_t a;
    CHECK_EQ(pthread_condattr_init(&a), 0);
    CHECK_EQ(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    CHECK_EQ(pthread_cond_init(&mono, &a), 0);
    CHECK_EQ(pthread_condattr_destroy(&a), 0);
    CHECK_EQ(pthread_mutex_lock(&tm), 0);
    /* 0: timedwait, REALTIME; 1: timedwait, MONOTONIC condattr;
     * 2: clockwait on CLOCK_MONOTONIC, on the REALTIME one */
    for (int i = 0; i < 3; i++) {
        pthread_cond_t *c = i == 1 ? &mono : &real;
        clockid_t clock = i == 0 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        struct timespec abs = ts_after(clock, 30);
        int rc;
        do { /* nobody signals: the timeout ends it, perhaps after spurious wake-ups */
            rc = i == 2 ? pthread_cond_clockwait(c, &tm, clock, &abs)
                        : pthread_cond_timedwait(c, &tm, &abs);
        } while (rc == 0);
        CHECK_EQ(rc, ETIMEDOUT);
        CHECK(ts_ge(ts_now(clock), abs));
        CHECK_EQ(pthread_mutex_trylock(&tm), EBUSY); /* held again */
    }
    CHECK_EQ(pthread_mutex_unlock(&tm), 0);
    CHECK_EQ(pthread_cond_destroy(&real), 0);
    CHECK_EQ(pthread_cond_destroy(&mono), 0);
    foreign_end(&t_done);
    return NULL;
}

static void check_foreign_timed(void)
{
    foreign_join(foreign(t_foreign, NULL), &t_done);
}

/* ---- producers and consumers ----------------------------------------- */

enum { ITEMS = 20000, FOREIGN = 2, USERS = 50, CAP = 16 };
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int buf[CAP], head, count, taken; /* under pm */
static atomic_int seen[ITEMS + 1];
static atomic_llong sum;

struct range {
    int first, n;
    bool foreign;
    atomic_int done; /* foreign ones */
};

static void *producer(void *arg)
{
    struct range *r = arg;
    for (int i = 0; i < r->n; i++) {
        CHECK_EQ(pthread_mutex_lock(&pm), 0);
        while (count == CAP)
            CHECK_EQ(pthread_cond_wait(&not_full, &pm), 0);
        buf[(head + count) % CAP] = r->first + i;
        count++;
        CHECK_EQ(pthread_cond_signal(&not_empty), 0);
        CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    }
    if (r->foreign)
        foreign_end(&r->done);
    return NULL;
}

static void *consumer(void *arg)
{
    atomic_int *done = arg;
    for (;;) {
        CHECK_EQ(pthread_mutex_lock(&pm), 0);
        while (count == 0 && taken < ITEMS)
            CHECK_EQ(pthread_cond_wait(&not_empty, &pm), 0);
        if (taken == ITEMS) {
            CHECK_EQ(pthread_mutex_unlock(&pm), 0);
            break;
        }
        int item = buf[head];
        head = (head + 1) % CAP;
        count--;
        if (++taken == ITEMS)
            CHECK_EQ(pthread_cond_broadcast(&not_empty), 0); /* the others end */
        CHECK_EQ(pthread_cond_signal(&not_full), 0);
        CHECK_EQ(pthread_mutex_unlock(&pm), 0);
        CHECK(item >= 1 && item <= ITEMS);
        atomic_fetch_add(&seen[item], 1);
        atomic_fetch_add(&sum, item);
    }
    if (done != NULL) /* a foreign one */
        foreign_end(done);
    return NULL;
}

static void check_counts(void)
{
    for (int i = 1; i <= ITEMS; i++) {
        CHECK_EQ(atomic_load(&seen[i]), 1);
        atomic_store(&seen[i], 0);
    }
    CHECK_EQ(atomic_load(&sum), (long long)ITEMS * (ITEMS + 1) / 2);
    atomic_store(&sum, 0);
    CHECK_EQ(count, 0);
    CHECK_EQ(taken, ITEMS);
    taken = 0;
}

/* Foreign producers, user consumers. */
static void check_foreign_produce(void)
{
    static struct range r[FOREIGN];
    pthread_t f[FOREIGN];
    cap_thread_t u[USERS];
    for (int i = 0; i < USERS; i++)
        u[i] = spawn(consumer, NULL);
    for (int i = 0; i < FOREIGN; i++) {
        r[i].first = 1 + i * (ITEMS / FOREIGN);
        r[i].n = ITEMS / FOREIGN;
        r[i].foreign = true;
        f[i] = foreign(producer, &r[i]);
    }
    for (int i = 0; i < USERS; i++)
        join(u[i]);
    for (int i = 0; i < FOREIGN; i++)
        foreign_join(f[i], &r[i].done);
    check_counts();
}

/* User producers, foreign consumers. */
static void check_foreign_consume(void)
{
    static struct range r[USERS];
    static atomic_int done[FOREIGN];
    pthread_t f[FOREIGN];
    cap_thread_t u[USERS];
    for (int i = 0; i < FOREIGN; i++)
        f[i] = foreign(consumer, &done[i]);
    for (int i = 0; i < USERS; i++) {
        r[i].first = 1 + i * (ITEMS / USERS);
        r[i].n = ITEMS / USERS;
        u[i] = spawn(producer, &r[i]);
    }
    for (int i = 0; i < USERS; i++)
        join(u[i]);
    for (int i = 0; i < FOREIGN; i++)
        foreign_join(f[i], &done[i]);
    check_counts();
}

/* ---- a foreign thread holds the mutex user threads wait for ---------- */

enum { H_WAITERS = 3 };
static pthread_mutex_t hm = PTHREAD_MUTEX_INITIALIZER;
static atomic_int h_held, h_trying, h_got, h_bystander, h_done;

static void *h_foreign(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&hm), 0);
    atomic_store(&h_held, 1);
    foreign_until(&h_trying, H_WAITERS);
    foreign_until(&h_bystander, 1); /* they do not hold up their worker */
    usleep(10000);                  /* let them get to waiting */
    CHECK_EQ(atomic_load(&h_got), 0);
    CHECK_EQ(pthread_mutex_unlock(&hm), 0);
    foreign_end(&h_done);
    return NULL;
}

static void *h_waiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&h_trying, 1);
    CHECK_EQ(pthread_mutex_lock(&hm), 0);
    atomic_fetch_add(&h_got, 1);
    CHECK_EQ(pthread_mutex_unlock(&hm), 0);
    return NULL;
}

static void *h_bystander_fn(void *arg)
{
    (void)arg;
    atomic_store(&h_bystander, 1);
    return NULL;
}

static void check_foreign_holds(void)
{
    pthread_t f = foreign(h_foreign, NULL);
    while (!atomic_load(&h_held))
        cap_sleep_ns(1000000);
    cap_thread_t w[H_WAITERS];
    for (int i = 0; i < H_WAITERS; i++)
        w[i] = spawn(h_waiter, NULL);
    cap_thread_t b = spawn(h_bystander_fn, NULL); /* runs behind the waiters */
    join(b);
    for (int i = 0; i < H_WAITERS; i++)
        join(w[i]);
    foreign_join(f, &h_done);
    CHECK_EQ(atomic_load(&h_got), H_WAITERS);
    CHECK_EQ(pthread_mutex_trylock(&hm), 0);
    CHECK_EQ(pthread_mutex_unlock(&hm), 0);
}

int main(void)
{
    check_foreign_waits();
    check_user_threads_wait();
    check_foreign_recursive();
    check_foreign_timed();
    check_foreign_produce();
    check_foreign_consume();
    check_foreign_holds();
    return 0;
}

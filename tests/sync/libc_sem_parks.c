/* SPDX-License-Identifier: MIT */
/* Description: glibc's sem_t (code built with <semaphore.h>, as a
 * third-party library is) on user threads: sem_wait parks the user
 * thread, so the worker goes on running the others. Cases: the only
 * poster is another user thread that first parks (a read on a pipe; a
 * sleep) before it posts; sem_timedwait and sem_clockwait (both clocks)
 * return -1 with errno ETIMEDOUT, not early, while a user thread spawned
 * before them runs, and -1 with EINVAL for tv_nsec 1000000000 or an
 * unknown clock; 100 user threads x 200 sem_wait/sem_post pairs on a
 * semaphore of 3, yielding while they hold a unit (never more than 3
 * inside, exact final sem_getvalue); a kernel thread the library does
 * not run (glibc's pthread_create) posts to a user thread waiting, once a
 * user thread spawned behind the waiter has run, and waits in glibc's
 * sem_wait for a user thread's post; a process-shared semaphore in
 * MAP_SHARED memory, waited for by a user thread while another runs,
 * and posted by a forked child (once told, after a sleep). Before the
 * library wrapped glibc's names the waiter slept in glibc's sem_wait on
 * its worker: with one worker the poster never ran again and the program
 * hung. */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fork_util.h"
#include "util.h"

/* errno through the library's accessor, not declared const as glibc's
 * __errno_location is: the compiler cannot keep its address across a wait
 * after which the thread may run on another worker (CAP_MIGRATE). */
int *cap_errno_location(void);
#undef errno
#define errno (*cap_errno_location())

/* ---- the poster parks first ------------------------------------------ */

static sem_t s;
static int post_pipe[2];
static atomic_int waiting, got;

static void *pipe_poster(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(post_pipe[0], &c, 1), 1); /* parks */
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(sem_post(&s), 0);
    return NULL;
}

static void *sleep_poster(void *arg)
{
    (void)arg;
    CHECK_EQ(usleep(20000), 0); /* parks */
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(sem_post(&s), 0);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiting, 1);
    CHECK_EQ(sem_wait(&s), 0);
    atomic_store(&got, 1);
    return NULL;
}

static void check_poster_parks(void)
{
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    CHECK_EQ(pipe(post_pipe), 0);
    cap_thread_t p = spawn(pipe_poster, NULL);
    cap_thread_t w = spawn(waiter, NULL);
    while (!atomic_load(&waiting))
        cap_yield();
    for (int i = 0; i < 20; i++)
        cap_yield(); /* this thread runs while the waiter waits */
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(write(post_pipe[1], "x", 1), 1);
    join(p);
    join(w);
    CHECK_EQ(atomic_load(&got), 1);
    close(post_pipe[0]);
    close(post_pipe[1]);

    atomic_store(&got, 0);
    p = spawn(sleep_poster, NULL);
    w = spawn(waiter, NULL);
    join(w);
    join(p);
    CHECK_EQ(atomic_load(&got), 1);
    int v = -1;
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&s), 0);
}

/* ---- timed waits ----------------------------------------------------- */

static atomic_int bystander_ran;

static void *bystander(void *arg)
{
    (void)arg;
    atomic_fetch_add(&bystander_ran, 1);
    return NULL;
}

static void timed_once(sem_t *ts, int clockwait, clockid_t clock)
{
    int before = atomic_load(&bystander_ran);
    cap_thread_t b = spawn(bystander, NULL);
    struct timespec abs = ts_after(clock, 40);
    errno = 0;
    int rc = clockwait ? sem_clockwait(ts, clock, &abs) : sem_timedwait(ts, &abs);
    CHECK_EQ(rc, -1);
    CHECK_EQ(errno, ETIMEDOUT);
    CHECK(ts_ge(ts_now(clock), abs));
    /* With one worker the bystander ran during the wait (it was queued
     * before the timer); with more it may still be on its way. */
    if (cap_worker_count() == 1)
        CHECK_EQ(atomic_load(&bystander_ran), before + 1);
    join(b);
    CHECK_EQ(atomic_load(&bystander_ran), before + 1);
}

static void check_timed(void)
{
    sem_t ts;
    CHECK_EQ(sem_init(&ts, 0, 0), 0);
    timed_once(&ts, 0, CLOCK_REALTIME);
    timed_once(&ts, 1, CLOCK_MONOTONIC);
    timed_once(&ts, 1, CLOCK_REALTIME);

    struct timespec bad = { 0, 1000000000 };
    errno = 0;
    CHECK_EQ(sem_timedwait(&ts, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sem_clockwait(&ts, CLOCK_MONOTONIC, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 40);
    errno = 0;
    CHECK_EQ(sem_clockwait(&ts, CLOCK_PROCESS_CPUTIME_ID, &abs), -1);
    CHECK_EQ(errno, EINVAL);
    struct timespec past = { 0, 0 };
    errno = 0;
    CHECK_EQ(sem_timedwait(&ts, &past), -1);
    CHECK_EQ(errno, ETIMEDOUT);

    CHECK_EQ(sem_post(&ts), 0); /* a unit there: no wait, the deadline does not matter */
    abs = ts_after(CLOCK_REALTIME, 60000);
    CHECK_EQ(sem_timedwait(&ts, &abs), 0);
    CHECK_EQ(sem_post(&ts), 0);
    CHECK_EQ(sem_clockwait(&ts, CLOCK_MONOTONIC, &past), 0);
    int v = -1;
    CHECK_EQ(sem_getvalue(&ts, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&ts), 0);
}

/* ---- stress ---------------------------------------------------------- */

enum { THREADS = 100, ROUNDS = 200, UNITS = 3 };
static sem_t units;
static atomic_int inside;
static atomic_long pairs;

static void *stress(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(sem_wait(&units), 0);
        CHECK_LT(atomic_fetch_add(&inside, 1), UNITS);
        if (i % 3 == 0)
            cap_yield(); /* holding a unit: the others wait meanwhile */
        atomic_fetch_sub(&inside, 1);
        atomic_fetch_add(&pairs, 1);
        CHECK_EQ(sem_post(&units), 0);
    }
    return NULL;
}

static void check_stress(void)
{
    CHECK_EQ(sem_init(&units, 0, UNITS), 0);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(stress, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&pairs), (long)THREADS * ROUNDS);
    CHECK_EQ(atomic_load(&inside), 0);
    int v = -1;
    CHECK_EQ(sem_getvalue(&units, &v), 0);
    CHECK_EQ(v, UNITS);
    CHECK_EQ(sem_destroy(&units), 0);
}

/* ---- a foreign thread (glibc's pthread_create) posts, and waits ------ */

static sem_t fs;
static atomic_int f_waiting, f_got, f_bystander, f_done;

/* A foreign thread's last step: f_done to 1, then it stays until a user
 * thread has seen that (foreign_join), so that it does not end just after
 * a wake-up it made: libc_sem_foreign_poster_exits.c covers that. */
static void foreign_end(void)
{
    atomic_store(&f_done, 1);
    while (atomic_load(&f_done) != 2)
        usleep(1000);
}

static void foreign_join(pthread_t f)
{
    while (atomic_load(&f_done) != 1)
        cap_sleep_ns(1000000);
    atomic_store(&f_done, 2);
    CHECK_EQ(pthread_join(f, NULL), 0);
    atomic_store(&f_done, 0);
}

static void *f_poster(void *arg)
{
    (void)arg;
    while (!atomic_load(&f_bystander))
        usleep(1000); /* the user thread spawned behind the waiter ran */
    CHECK_EQ(atomic_load(&f_got), 0);
    CHECK_EQ(sem_post(&fs), 0);
    foreign_end();
    return NULL;
}

static void *f_waiter(void *arg)
{
    (void)arg;
    atomic_store(&f_waiting, 1);
    CHECK_EQ(sem_wait(&fs), 0);
    atomic_store(&f_got, 1);
    foreign_end();
    return NULL;
}

static void *f_user_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(sem_wait(&fs), 0);
    atomic_store(&f_got, 1);
    return NULL;
}

static void *f_bystander_fn(void *arg)
{
    (void)arg;
    atomic_store(&f_bystander, 1);
    return NULL;
}

static void check_foreign(void)
{
    CHECK_EQ(sem_init(&fs, 0, 0), 0);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, f_poster, NULL), 0);
    cap_thread_t w = spawn(f_user_waiter, NULL);
    cap_thread_t b = spawn(f_bystander_fn, NULL); /* behind the waiter */
    join(b);
    join(w);
    CHECK_EQ(atomic_load(&f_got), 1);
    foreign_join(f);

    atomic_store(&f_got, 0);
    CHECK_EQ(pthread_create(&f, NULL, f_waiter, NULL), 0);
    while (!atomic_load(&f_waiting))
        cap_sleep_ns(1000000);
    CHECK_EQ(usleep(10000), 0); /* it gets to sleep in glibc's wait, most likely */
    CHECK_EQ(atomic_load(&f_got), 0);
    CHECK_EQ(sem_post(&fs), 0);
    foreign_join(f);
    CHECK_EQ(atomic_load(&f_got), 1);
    int v = -1;
    CHECK_EQ(sem_getvalue(&fs, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&fs), 0);
}

/* ---- process-shared, posted by another process ----------------------- */

static sem_t *shared_sem;
static int go_pipe[2]; /* the child posts once told through it */
static atomic_int sh_waiting, sh_got, sh_bystander;

static int child_posts(void)
{
    char c;
    if (read(go_pipe[0], &c, 1) != 1)
        return 1;
    usleep(20000);
    return sem_post(shared_sem) == 0 ? 0 : 2;
}

static void *sh_waiter(void *arg)
{
    (void)arg;
    atomic_store(&sh_waiting, 1);
    CHECK_EQ(sem_wait(shared_sem), 0);
    atomic_store(&sh_got, 1);
    return NULL;
}

static void *sh_bystander_fn(void *arg)
{
    (void)arg;
    atomic_store(&sh_bystander, 1);
    return NULL;
}

static void check_pshared(void)
{
    shared_sem = mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
    CHECK(shared_sem != MAP_FAILED);
    CHECK_EQ(sem_init(shared_sem, 1, 0), 0);
    CHECK_EQ(pipe(go_pipe), 0);
    pid_t pid = fork_child(child_posts);
    cap_thread_t w = spawn(sh_waiter, NULL);
    while (!atomic_load(&sh_waiting))
        cap_yield();
    cap_thread_t b = spawn(sh_bystander_fn, NULL); /* runs while the waiter waits */
    join(b);
    CHECK_EQ(atomic_load(&sh_got), 0);
    CHECK_EQ(write(go_pipe[1], "x", 1), 1);
    join(w);
    CHECK_EQ(atomic_load(&sh_got), 1);
    CHECK_EQ(child_exit_status(pid), 0);
    int v = -1;
    CHECK_EQ(sem_getvalue(shared_sem, &v), 0);
    CHECK_EQ(v, 0);

    /* and a timed wait on it that the child's post ends */
    pid = fork_child(child_posts);
    CHECK_EQ(write(go_pipe[1], "x", 1), 1);
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 60000);
    CHECK_EQ(sem_clockwait(shared_sem, CLOCK_MONOTONIC, &abs), 0);
    CHECK_EQ(child_exit_status(pid), 0);
    CHECK_EQ(sem_getvalue(shared_sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(shared_sem), 0);
    CHECK_EQ(munmap(shared_sem, sizeof(sem_t)), 0);
    close(go_pipe[0]);
    close(go_pipe[1]);
}

int main(void)
{
    check_poster_parks();
    check_timed();
    check_stress();
    check_foreign();
    check_pshared();
    return 0;
}

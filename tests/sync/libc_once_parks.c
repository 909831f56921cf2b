/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_once and C11's call_once (code built with
 * <pthread.h> or <threads.h>, as a third-party library is) whose init
 * routine, run by a user thread, parks (a read on a pipe): the other
 * user threads that call it meanwhile park until init has returned, so
 * the worker goes on running the others (this thread keeps running
 * while they wait); a kernel thread the library does not run (glibc's
 * pthread_create) that calls it on the same control waits too; init
 * runs exactly once and every caller, on return, sees what it did.
 * Before the library wrapped glibc's names a second caller slept in
 * glibc's pthread_once on its worker: with one worker the init routine
 * never ran again and the program hung. */
#include <pthread.h>
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>

#include "util.h"

enum { CALLERS = 5 };

struct scene {
    int pipe[2];        /* init parks reading it */
    atomic_int started; /* init runs */
    atomic_int runs;    /* times init ran */
    int effect;         /* what init did (plain: once's ordering publishes it) */
    atomic_int calling; /* callers about to call */
    atomic_int returned;
    atomic_int foreign_calling, foreign_done;
    void (*call)(void); /* pthread_once or call_once on the scene's control */
};

static struct scene scenes[2];

static void init_body(struct scene *s)
{
    atomic_fetch_add(&s->runs, 1);
    atomic_store(&s->started, 1);
    char c;
    CHECK_EQ(read(s->pipe[0], &c, 1), 1); /* parks inside init */
    CHECK_EQ(atomic_load(&s->returned), 0);
    s->effect = 42;
}

static pthread_once_t p_once = PTHREAD_ONCE_INIT;
static void p_init(void)
{
    init_body(&scenes[0]);
}
static void p_call(void)
{
    CHECK_EQ(pthread_once(&p_once, p_init), 0);
}

static once_flag c_once = ONCE_FLAG_INIT;
static void c_init(void)
{
    init_body(&scenes[1]);
}
static void c_call(void)
{
    call_once(&c_once, c_init);
}

static void *caller(void *arg)
{
    struct scene *s = arg;
    atomic_fetch_add(&s->calling, 1);
    s->call();
    CHECK_EQ(s->effect, 42);
    CHECK_EQ(atomic_load(&s->runs), 1);
    atomic_fetch_add(&s->returned, 1);
    return NULL;
}

static void *foreign_caller(void *arg)
{
    struct scene *s = arg;
    atomic_store(&s->foreign_calling, 1);
    s->call();
    CHECK_EQ(s->effect, 42);
    CHECK_EQ(atomic_load(&s->runs), 1);
    atomic_store(&s->foreign_done, 1);
    return NULL;
}

static void run(struct scene *s)
{
    CHECK_EQ(pipe(s->pipe), 0);
    cap_thread_t first = spawn(caller, s);
    while (!atomic_load(&s->started))
        cap_yield();
    cap_thread_t t[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        t[i] = spawn(caller, s);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign_caller, s), 0);
    while (atomic_load(&s->calling) < CALLERS + 1 || !atomic_load(&s->foreign_calling))
        cap_yield(); /* this thread runs while they wait */
    for (int i = 0; i < 20; i++)
        cap_yield();
    CHECK_EQ(usleep(10000), 0); /* the foreign one gets to wait, most likely */
    CHECK_EQ(atomic_load(&s->returned), 0);
    CHECK_EQ(atomic_load(&s->foreign_done), 0);
    CHECK_EQ(write(s->pipe[1], "x", 1), 1);
    join(first);
    for (int i = 0; i < CALLERS; i++)
        join(t[i]);
    while (!atomic_load(&s->foreign_done))
        cap_sleep_ns(1000000);
    CHECK_EQ(pthread_join(f, NULL), 0);
    CHECK_EQ(atomic_load(&s->returned), CALLERS + 1);
    s->call(); /* done: returns at once */
    CHECK_EQ(atomic_load(&s->runs), 1);
    close(s->pipe[0]);
    close(s->pipe[1]);
}

int main(void)
{
    scenes[0].call = p_call;
    scenes[1].call = c_call;
    run(&scenes[0]);
    run(&scenes[1]);
    return 0;
}

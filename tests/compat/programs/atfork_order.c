/* SPDX-License-Identifier: MIT */
/* Description: pthread_atfork handlers run at every fork in POSIX's
 * order: prepare handlers in reverse order of registration, then parent
 * handlers (in the parent) or child handlers (in the child) in order of
 * registration; NULL handlers are skipped. The same from the main thread
 * and from another thread, with handlers registered from several
 * threads. While a thread keeps registering more, every fork runs the
 * parent or child handler of exactly the registrations whose prepare
 * handler it ran. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { FORKS = 20, MORE = 2000 };

static char trail[64];
static size_t len;

static void note(char c)
{
    if (len + 1 < sizeof trail)
        trail[len++] = c;
    trail[len] = '\0';
}

static void prep_a(void) { note('A'); }
static void prep_b(void) { note('B'); }
static void prep_d(void) { note('D'); }
static void parent_a(void) { note('a'); }
static void parent_c(void) { note('c'); }
static void parent_d(void) { note('d'); }
static void child_a(void) { note('1'); }
static void child_b(void) { note('2'); }
static void child_c(void) { note('3'); }

/* The registrar's handlers: counts. */
static atomic_long n_prepare, n_parent, n_child;
static atomic_int registering_done;

static void count_prepare(void) { atomic_fetch_add(&n_prepare, 1); }
static void count_parent(void) { atomic_fetch_add(&n_parent, 1); }
static void count_child(void) { atomic_fetch_add(&n_child, 1); }

static void *register_c(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_atfork(NULL, parent_c, child_c), 0); /* no prepare */
    return NULL;
}

static void *registrar(void *arg)
{
    (void)arg;
    for (int i = 0; i < MORE; i++) {
        EXPECT_EQ(pthread_atfork(count_prepare, count_parent, count_child), 0);
        if (i % 8 == 0)
            sched_yield(); /* let the forks in, on one worker too */
    }
    atomic_store(&registering_done, 1);
    return NULL;
}

/* One fork: checks the trail on both sides; the child reports by its exit
 * status (0: all as expected). Returns how many of the registrar's
 * handlers the fork ran. */
static long fork_and_check(void)
{
    len = 0;
    trail[0] = '\0';
    long prep0 = atomic_load(&n_prepare), parent0 = atomic_load(&n_parent);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    long prepared = atomic_load(&n_prepare) - prep0;
    if (pid == 0) {
        if (strcmp(trail, "DBA123") != 0)
            _exit(2);
        if (atomic_load(&n_child) != prepared)
            _exit(3); /* n_child is 0 in the parent */
        _exit(0);
    }
    if (strcmp(trail, "DBAacd") != 0) {
        fprintf(stderr, "parent's trail: %s\n", trail);
        EXPECT(0);
    }
    EXPECT_EQ(atomic_load(&n_parent) - parent0, prepared);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    return prepared;
}

static void *forker(void *arg)
{
    (void)arg;
    for (int i = 0; i < FORKS; i++)
        fork_and_check();
    return NULL;
}

int main(void)
{
    /* Registration order A, B, C (another thread), D. */
    EXPECT_EQ(pthread_atfork(prep_a, parent_a, child_a), 0);
    EXPECT_EQ(pthread_atfork(prep_b, NULL, child_b), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, register_c, NULL), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_atfork(prep_d, parent_d, NULL), 0);

    pthread_t r;
    EXPECT_EQ(pthread_create(&r, NULL, registrar, NULL), 0);
    for (int i = 0; i < FORKS; i++) {
        fork_and_check(); /* from the main thread */
        sched_yield();
    }
    EXPECT_EQ(pthread_create(&t, NULL, forker, NULL), 0); /* from another thread */
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(pthread_join(r, NULL), 0);
    EXPECT(atomic_load(&registering_done));
    EXPECT_EQ(fork_and_check(), MORE); /* all registered: every one runs */
    return 0;
}

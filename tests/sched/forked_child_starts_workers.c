/* SPDX-License-Identifier: MIT */
/* Description: a fork's child gets its workers back. Right after the fork
 * it has one (the forking thread's; a child that only execs or exits
 * starts no kernel thread), and its first thread creation starts the
 * others, so its threads run on all of them, as the parent's do: 64
 * threads that finish only once every worker has run one of them (a hang,
 * so a failure, if the child kept one worker). Forked from main and from
 * a thread that may run on another worker; and a child's child, forked
 * before and after its parent started its workers. Before, a child ran on
 * one worker for good (httpd's MPM children: 25 threads on one kernel
 * thread).
 *
 * Each fork is made while the process's other threads wait (the forking
 * threads are made and joined one at a time): GCC 12's AddressSanitizer
 * allocator takes no lock around a fork, so a child forked while another
 * kernel thread was inside malloc or free (a thread ending, another
 * fork's thread creation) found that lock held for good at its first
 * allocation (its new worker's), about 1 run in 50 of the sanitized
 * build. glibc's malloc is safe there. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 64, MAX_WORKERS = 64 };

static int workers;
static atomic_int seen[MAX_WORKERS];

static bool all_seen(void)
{
    for (int i = 0; i < workers; i++)
        if (!atomic_load(&seen[i]))
            return false;
    return true;
}

static void *note_worker(void *arg)
{
    int w = cap_worker_id();
    CHECK(w >= 0 && w < workers);
    atomic_store(&seen[w], 1);
    while (!all_seen())
        cap_yield();
    return arg;
}

/* In a child: its threads run on every worker. */
static void spread(void)
{
    for (int i = 0; i < MAX_WORKERS; i++)
        atomic_store(&seen[i], 0);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, note_worker, NULL), 0);
    CHECK_EQ(cap_worker_count(), workers);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK(all_seen());
}

static void reap(pid_t pid)
{
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

static void child_body(void)
{
    CHECK_EQ(cap_worker_count(), 1); /* none started until a thread is made */
    pid_t early = fork(); /* a child's child before the child's workers start */
    CHECK_GE(early, 0);
    if (early == 0) {
        CHECK_EQ(cap_worker_count(), 1);
        spread();
        _exit(0);
    }
    reap(early);
    spread();
    pid_t late = fork(); /* and after */
    CHECK_GE(late, 0);
    if (late == 0) {
        CHECK_EQ(cap_worker_count(), 1);
        spread();
        _exit(0);
    }
    reap(late);
    _exit(0);
}

static void *fork_here(void *arg)
{
    (void)arg;
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0)
        child_body();
    reap(pid);
    return NULL;
}

int main(void)
{
    workers = cap_worker_count();
    CHECK(workers >= 1 && workers <= MAX_WORKERS);
    fork_here(NULL); /* from main */
    for (int i = 0; i < 4; i++) { /* from threads, some on another worker */
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, fork_here, NULL), 0);
        CHECK_EQ(cap_thread_join(t, NULL), 0);
    }
    return 0;
}

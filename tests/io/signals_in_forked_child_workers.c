/* SPDX-License-Identifier: MIT */
/* Description: signals in a fork's child whose other workers started at
 * its first thread creation (sched/worker.c, cap__workers_forked_restart)
 * behave as in the parent. A thread that blocks SIGUSR1 and SIGUSR2
 * forks; in the child, 16 threads run on every worker (each yields until
 * all workers have run one) and
 *  - each starts with the forking thread's mask (both blocked);
 *  - SIGUSR2 sent to the process, which every thread blocks, is taken by
 *    sigwaitinfo in each thread in turn, with the sender's pid;
 *  - pthread_kill (cap_thread_kill) of SIGUSR1 to each thread, once it unblocked it and
 *    waits in a pipe read, runs the handler in that thread, never in
 *    another, and the read ends with EINTR (or, if the handler ran just
 *    before the read began, returns the byte written after it).
 * Under one worker the child has nothing to start: the same checks.
 * Before, the fork left the child's kernel thread with the parent's
 * kernel mask (what every parent thread blocked: not SIGUSR2, which main
 * accepts), so the first SIGUSR2 killed the child, although its only
 * thread blocked it. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "io/io_util.h"

enum { THREADS = 16, MAX_WORKERS = 64 };

static int workers;
static atomic_int seen[MAX_WORKERS];
static atomic_int turn = -1;     /* the thread whose sigwaitinfo is due */
static atomic_int waited;        /* sigwaitinfo calls that returned SIGUSR2 */
static atomic_int reading[THREADS]; /* thread i unblocked SIGUSR1 and reads */
static int pipes[THREADS][2];
static cap_thread_t threads[THREADS];
static atomic_int handler_runs;
static cap_thread_t handled_in;

static void on_usr1(int sig)
{
    (void)sig;
    handled_in = cap_thread_self();
    atomic_fetch_add(&handler_runs, 1);
}

static sigset_t both(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    return s;
}

static bool all_seen(void)
{
    for (int i = 0; i < workers; i++)
        if (!atomic_load(&seen[i]))
            return false;
    return true;
}

static void *child_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    sigset_t cur;
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
    CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
    CHECK_EQ(sigismember(&cur, SIGUSR2), 1);
    int w = cap_worker_id();
    CHECK(w >= 0 && w < workers);
    atomic_store(&seen[w], 1);
    while (!all_seen())
        cap_yield();

    while (atomic_load(&turn) != i)
        cap_yield();
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    siginfo_t info;
    CHECK_EQ(sigwaitinfo(&usr2, &info), SIGUSR2);
    CHECK_EQ(info.si_code, SI_USER);
    CHECK_EQ(info.si_pid, getpid());
    atomic_fetch_add(&waited, 1);

    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    atomic_store(&reading[i], 1);
    char c;
    errno = 0;
    ssize_t got = read(pipes[i][0], &c, 1);
    CHECK(got == 1 || (got == -1 && errno == EINTR));
    return NULL;
}

static void child_main(void)
{
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(pipe(pipes[i]), 0);
        threads[i] = spawn(child_thread, (void *)(intptr_t)i);
    }
    CHECK_EQ(cap_worker_count(), workers); /* started by the first spawn */
    for (int i = 0; i < THREADS; i++) {
        atomic_store(&turn, i);
        CHECK_EQ(kill(getpid(), SIGUSR2), 0);
        while (atomic_load(&waited) != i + 1)
            cap_sleep_ns(100000);
    }
    for (int i = 0; i < THREADS; i++) {
        while (!atomic_load(&reading[i]))
            cap_sleep_ns(100000);
        int runs = atomic_load(&handler_runs);
        CHECK_EQ(cap_thread_kill(threads[i], SIGUSR1), 0);
        while (atomic_load(&handler_runs) == runs)
            cap_sleep_ns(100000);
        CHECK(cap_thread_equal(handled_in, threads[i]));
        CHECK_EQ(write(pipes[i][1], "x", 1), 1); /* for a read that began after */
        join(threads[i]);
        CHECK_EQ(atomic_load(&handler_runs), runs + 1);
    }
    CHECK(all_seen());
}

static void *forker(void *arg)
{
    (void)arg;
    sigset_t s = both();
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        child_main();
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "the child ended by signal %d\n", WTERMSIG(status));
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    return NULL;
}

int main(void)
{
    workers = cap_worker_count();
    CHECK(workers >= 1 && workers <= MAX_WORKERS);
    install_handler(SIGUSR1, on_usr1, 0);
    join(spawn(forker, NULL));
    return 0;
}

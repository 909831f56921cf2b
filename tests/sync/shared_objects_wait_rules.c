/* SPDX-License-Identifier: MIT */
/* Description: the rules of waiting on process-shared mutexes and
 * condition variables, which wait in the kernel on the offload pool:
 * a timed lock or condition wait whose time has passed times out without
 * starting a pool thread; 50 user threads wait for a mutex a forked child
 * holds while the worker's other threads go on running, and each gets it
 * once the child lets go; a signal handler that runs during a mutex wait
 * does not end it (pthread_mutex_lock never fails with EINTR); a
 * condition wait is a cancellation point whose cleanup handler runs with
 * the mutex held. (Before, process-shared objects were refused with
 * ENOTSUP.) */
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_util.h"
#include "util.h"

enum { WAITERS = 50 };

struct shared {
    cap_mutex_t m, em;
    cap_cond_t c;
    long counter;
};

static struct shared *sh;
static atomic_int entered, bystander_ran, handled;

static void init_shared(void)
{
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->m, CAP_MUTEX_NORMAL);
    shared_mutex_init(&sh->em, CAP_MUTEX_ERRORCHECK);
    shared_cond_init(&sh->c);
}

static void past_deadlines(void)
{
    int tasks = process_tasks();
    struct timespec past = ts_after(CLOCK_REALTIME, -10);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    CHECK_EQ(cap_mutex_timedlock(&sh->em, &past), 0); /* free: taken */
    CHECK_EQ(cap_mutex_unlock(&sh->em), 0);
    cap_mutex_t *m = &sh->m;
    struct timespec mono_past = ts_after(CLOCK_MONOTONIC, -10);
    CHECK_EQ(cap_mutex_clocklock(m, CLOCK_MONOTONIC, &mono_past), ETIMEDOUT);
    CHECK_EQ(cap_cond_timedwait(&sh->c, m, &past), ETIMEDOUT);
    CHECK_EQ(cap_mutex_unlock(m), 0);
    CHECK_EQ(process_tasks(), tasks);
}

static void *lock_once(void *arg)
{
    (void)arg;
    atomic_fetch_add(&entered, 1);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    sh->counter++;
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void waiters_for_child(void)
{
    int held[2], go[2];
    CHECK_EQ(pipe(held), 0);
    CHECK_EQ(pipe(go), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char c;
        if (cap_mutex_lock(&sh->m) != 0 || write(held[1], "h", 1) != 1 ||
            read(go[0], &c, 1) != 1 || cap_mutex_unlock(&sh->m) != 0)
            _exit(2);
        _exit(0);
    }
    char c;
    CHECK_EQ(read(held[0], &c, 1), 1);
    cap_thread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        t[i] = spawn(lock_once, NULL);
    while (atomic_load(&entered) != WAITERS)
        cap_yield();
    join(spawn(bystander, NULL));
    CHECK_EQ(atomic_load(&bystander_ran), 1);
    CHECK_EQ(sh->counter, 0);
    CHECK_EQ(write(go[1], "g", 1), 1);
    for (int i = 0; i < WAITERS; i++)
        join(t[i]);
    CHECK_EQ(sh->counter, WAITERS);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(close(held[i]), 0);
        CHECK_EQ(close(go[i]), 0);
    }
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_store(&handled, 1);
}

static void *lock_through_signal(void *arg)
{
    (void)arg;
    atomic_store(&entered, 1);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    CHECK_EQ(atomic_load(&handled), 1);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    return NULL;
}

static void signal_during_lock(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    atomic_store(&entered, 0);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    cap_thread_t t = spawn(lock_through_signal, NULL);
    while (!atomic_load(&entered))
        cap_yield();
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    while (!atomic_load(&handled))
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    join(t);
}

static void unlock_in_cleanup(void *arg)
{
    CHECK_EQ(cap_mutex_unlock(arg), 0); /* held by this thread: errorcheck says so */
    atomic_store(&handled, 2);
}

static void *wait_forever(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&sh->em), 0);
    cap_cleanup_push(unlock_in_cleanup, &sh->em);
    atomic_store(&entered, 1);
    for (;;)
        cap_cond_wait(&sh->c, &sh->em);
    cap_cleanup_pop(0);
    return NULL;
}

static void cancel_cond_wait(void)
{
    atomic_store(&entered, 0);
    cap_thread_t t = spawn(wait_forever, NULL);
    while (!atomic_load(&entered))
        cap_yield();
    CHECK_EQ(cap_mutex_lock(&sh->em), 0); /* the waiter has let it go */
    CHECK_EQ(cap_mutex_unlock(&sh->em), 0);
    CHECK_EQ(cap_thread_cancel(t), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&handled), 2);
    CHECK_EQ(cap_mutex_trylock(&sh->em), 0);
    CHECK_EQ(cap_mutex_unlock(&sh->em), 0);
}

int main(void)
{
    init_shared();
    past_deadlines();
    waiters_for_child();
    signal_during_lock();
    cancel_cond_wait();
    CHECK_EQ(cap_cond_destroy(&sh->c), 0);
    CHECK_EQ(cap_mutex_destroy(&sh->m), 0);
    CHECK_EQ(cap_mutex_destroy(&sh->em), 0);
    return 0;
}

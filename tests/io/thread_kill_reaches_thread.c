/* SPDX-License-Identifier: MIT */
/* Description: pthread_kill (cap_thread_kill) sends a signal to one user
 * thread, as POSIX says: its handler runs in that thread, never in
 * another one, and
 *  - a read it is parked in fails with EINTR after the handler ran
 *    (handler without SA_RESTART), or goes on and later returns its data
 *    (SA_RESTART: the handler runs while the read still waits); so does
 *    a semaphore wait;
 *  - so does a signal sent from inside another signal's handler (on any
 *    kernel thread: pthread_kill is async-signal-safe);
 *  - a thread parked on a mutex runs the handler as it gets the mutex;
 *  - sigsuspend returns EINTR after the handler;
 *  - a thread that blocks the signal keeps it pending (sigpending shows
 *    it, other threads that accept it never run the handler) until it
 *    unblocks, and the handler has run when pthread_sigmask returns;
 *    raise() of a blocked signal is held so too;
 *  - sigwaitinfo in the target takes it (si_code SI_USER, as glibc's
 *    reports a tgkill's SI_TKILL), no handler;
 *  - a thread computing on another worker is interrupted there (the
 *    handler runs inside its loop, not at a later yield);
 *  - an ignored signal is dropped; one whose default action ends the
 *    process ends it, at once if the thread accepts it, else once the
 *    thread unblocks it (in a fork's child);
 *  - bad numbers give EINVAL, stale handles ESRCH.
 * Before, cap_thread_kill did not exist and the header's pthread_kill
 * returned EINVAL for every signal. */
#include <capriccio/sync.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "fork_util.h"
#include "io/io_util.h"

static volatile sig_atomic_t usr1_runs, usr2_runs, spinning, seen_spinning;
static _Atomic cap_thread_t usr1_in, usr2_in;
static int p[2];
static atomic_int ready, done;

static void on_usr1(int sig)
{
    (void)sig;
    usr1_in = cap_thread_self();
    seen_spinning = spinning;
    usr1_runs++;
}

static void on_usr2(int sig)
{
    (void)sig;
    usr2_in = cap_thread_self();
    usr2_runs++;
}

static sigset_t one(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    return s;
}

static void wait_for(atomic_int *flag)
{
    while (!atomic_load(flag))
        cap_usleep(1000);
}

/* Sends sig to t until done: one that comes before t parks finds it
 * running, runs the handler and interrupts nothing. */
static void kill_until_done(cap_thread_t t, int sig)
{
    while (!atomic_load(&done)) {
        CHECK_EQ(cap_thread_kill(t, sig), 0);
        cap_usleep(5000);
    }
}

/* ---- a parked read: EINTR, or goes on under SA_RESTART -------------------- */

static void *read_interrupted(void *arg)
{
    (void)arg;
    char c;
    atomic_store(&ready, 1);
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_GE(usr1_runs, 1); /* before the EINTR */
    CHECK_EQ(usr1_in, cap_thread_self());
    atomic_store(&done, 1);
    return NULL;
}

static void *read_goes_on(void *arg)
{
    (void)arg;
    char c = 0;
    atomic_store(&ready, 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'x');
    return NULL;
}

static void parked_read(void)
{
    usr1_runs = 0;
    atomic_store(&ready, 0);
    atomic_store(&done, 0);
    cap_thread_t t = spawn(read_interrupted, NULL);
    wait_for(&ready);
    kill_until_done(t, SIGUSR1);
    join(t);

    /* SA_RESTART: the handler runs in t while the read waits; then the
     * data comes and the read returns it. */
    usr2_runs = 0;
    atomic_store(&ready, 0);
    t = spawn(read_goes_on, NULL);
    wait_for(&ready);
    cap_usleep(20000); /* most likely parked by now (either way is right) */
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    while (usr2_runs == 0)
        cap_usleep(1000);
    CHECK_EQ(usr2_in, t);
    CHECK_EQ(write(p[1], "x", 1), 1);
    join(t);
}

/* ---- sent from inside a handler ------------------------------------------- */

static _Atomic cap_thread_t forward_to;

/* pthread_kill is async-signal-safe: a process-directed SIGPROF, handled
 * on whatever kernel thread, forwards SIGUSR1 to one thread. */
static void on_prof(int sig)
{
    (void)sig;
    int saved = errno;
    if (cap_thread_kill(forward_to, SIGUSR1) != 0)
        _exit(6);
    errno = saved;
}

static void from_a_handler(void)
{
    install_handler(SIGPROF, on_prof, SA_RESTART);
    usr1_runs = 0;
    atomic_store(&ready, 0);
    atomic_store(&done, 0);
    cap_thread_t t = spawn(read_interrupted, NULL);
    forward_to = t;
    wait_for(&ready);
    while (!atomic_load(&done)) {
        CHECK_EQ(kill(getpid(), SIGPROF), 0);
        cap_usleep(5000);
    }
    join(t);
}

/* ---- a semaphore wait under SA_RESTART: handler, then it goes on --------- */

static cap_sem_t sem;

static void *sem_waiter(void *arg)
{
    (void)arg;
    atomic_store(&ready, 1);
    CHECK_EQ(cap_sem_wait(&sem), 0);
    CHECK_GE(usr2_runs, 1);
    return NULL;
}

static void sem_goes_on(void)
{
    usr2_runs = 0;
    atomic_store(&ready, 0);
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    cap_thread_t t = spawn(sem_waiter, NULL);
    wait_for(&ready);
    cap_usleep(20000); /* most likely parked by now (either way is right) */
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    while (usr2_runs == 0) /* runs while the wait goes on */
        cap_usleep(1000);
    CHECK_EQ(usr2_in, t);
    CHECK_EQ(cap_sem_post(&sem), 0);
    join(t);
    CHECK_EQ(cap_sem_destroy(&sem), 0);
}

/* ---- a mutex wait: the handler runs as it gets the mutex ----------------- */

static cap_mutex_t mu = CAP_MUTEX_INITIALIZER;

static void *lock_waiter(void *arg)
{
    (void)arg;
    atomic_store(&ready, 1);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    CHECK_EQ(usr1_runs, 1);
    CHECK_EQ(usr1_in, cap_thread_self());
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    return NULL;
}

static void mutex_wait(void)
{
    usr1_runs = 0;
    atomic_store(&ready, 0);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    cap_thread_t t = spawn(lock_waiter, NULL);
    wait_for(&ready);
    cap_usleep(10000);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    cap_usleep(10000);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    join(t);
}

/* ---- sigsuspend ----------------------------------------------------------- */

static void *suspender(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR1), none;
    sigemptyset(&none);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    atomic_store(&ready, 1);
    /* Blocked until the suspension: sent before or during, it ends it. */
    errno = 0;
    CHECK_EQ(sigsuspend(&none), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(usr1_runs, 1);
    CHECK_EQ(usr1_in, cap_thread_self());
    sigset_t now;
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
    CHECK(sigismember(&now, SIGUSR1)); /* its mask again */
    return NULL;
}

static void suspend(void)
{
    usr1_runs = 0;
    atomic_store(&ready, 0);
    cap_thread_t t = spawn(suspender, NULL);
    wait_for(&ready);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
}

/* ---- blocked: pending for the thread alone --------------------------------- */

static void *blocker(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR1), pend;
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    atomic_store(&ready, 1);
    wait_for(&done); /* main sent SIGUSR1 meanwhile */
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(sigismember(&pend, SIGUSR1));
    cap_usleep(2000); /* parks and resumes: still held */
    CHECK_EQ(usr1_runs, 0);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(usr1_runs, 1);
    CHECK_EQ(usr1_in, cap_thread_self());
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(!sigismember(&pend, SIGUSR1));

    /* raise() is the thread's own too: held while it blocks the signal,
     * whatever the other threads block. */
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(usr1_runs, 1);
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(sigismember(&pend, SIGUSR1));
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(usr1_runs, 2);
    return NULL;
}

static void blocked(void)
{
    usr1_runs = 0;
    atomic_store(&ready, 0);
    atomic_store(&done, 0);
    cap_thread_t t = spawn(blocker, NULL);
    wait_for(&ready);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    cap_usleep(5000); /* main accepts SIGUSR1: it must not run it */
    CHECK_EQ(usr1_runs, 0);
    atomic_store(&done, 1);
    join(t);
}

/* ---- sigwaitinfo takes it --------------------------------------------------- */

static void *taker(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    atomic_store(&ready, 1);
    siginfo_t si;
    CHECK_EQ(sigwaitinfo(&s, &si), SIGUSR2);
    CHECK_EQ(si.si_code, SI_USER);
    CHECK_EQ(si.si_pid, getpid());
    CHECK_EQ(usr2_runs, 0);
    return NULL;
}

static void waited(void)
{
    usr2_runs = 0;
    atomic_store(&ready, 0);
    cap_thread_t t = spawn(taker, NULL);
    wait_for(&ready);
    cap_usleep(10000); /* parked in the wait, most likely */
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    join(t);
    CHECK_EQ(usr2_runs, 0);
}

/* ---- a thread running on another worker -------------------------------------- */

static long spin_kthread;
static bool lone_worker;

/* Never yields with two workers (where main, which does not yield
 * either, keeps the other): only a kick can reach it. */
static void *spinner(void *arg)
{
    (void)arg;
    spin_kthread = syscall(SYS_gettid);
    spinning = 1;
    atomic_store(&ready, 1);
    for (unsigned long i = 1; usr1_runs == 0; i++) {
        if (lone_worker && i % (1ul << 20) == 0) { /* lets main run */
            spinning = 0;
            cap_yield();
            spinning = 1;
        }
    }
    spinning = 0;
    return NULL;
}

static void running(void)
{
    const char *w = getenv("CAP_WORKERS");
    lone_worker = w == NULL || atoi(w) == 1;
    usr1_runs = 0;
    seen_spinning = 0;
    atomic_store(&ready, 0);
    cap_thread_t t = spawn(spinner, NULL);
    while (!atomic_load(&ready))
        if (lone_worker)
            cap_yield();
    CHECK_EQ(lone_worker, spin_kthread == syscall(SYS_gettid));
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
    CHECK_EQ(usr1_runs, 1);
    CHECK_EQ(usr1_in, t);
    if (!lone_worker) /* kicked on its worker: inside the loop */
        CHECK_EQ(seen_spinning, 1);
}

/* ---- errors and dropped signals ------------------------------------------------ */

static void *nothing(void *arg)
{
    return arg;
}

static void errors(void)
{
    cap_thread_t self = cap_thread_self();
    CHECK_EQ(cap_thread_kill(self, -1), EINVAL);
    CHECK_EQ(cap_thread_kill(self, NSIG), EINVAL);
    CHECK_EQ(cap_thread_kill(self, 33), EINVAL);
    CHECK_EQ(cap_thread_kill(self, 0), 0);
    cap_thread_t t = spawn(nothing, NULL);
    join(t);
    CHECK_EQ(cap_thread_kill(t, 0), ESRCH);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), ESRCH);
    /* Ignored and not blocked: dropped, not pending. */
    CHECK(signal(SIGHUP, SIG_IGN) != SIG_ERR);
    CHECK_EQ(cap_thread_kill(self, SIGHUP), 0);
    CHECK_EQ(cap_thread_kill(self, SIGWINCH), 0);
    sigset_t pend;
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(!sigismember(&pend, SIGHUP));
    CHECK(!sigismember(&pend, SIGWINCH));
}

/* ---- the default action ends the process -------------------------------------- */

static int report[2];

static void *term_blocker(void *arg)
{
    sigset_t s = one(SIGTERM);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    atomic_store(&ready, 1);
    wait_for(&done);
    if (arg != NULL) /* held so far */
        CHECK_EQ(write(report[1], "A", 1), 1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    _exit(7); /* not reached: SIGTERM's default action */
}

static int child_kills(bool blocked_first)
{
    atomic_store(&ready, 0);
    atomic_store(&done, 0);
    cap_thread_t t = spawn(term_blocker, blocked_first ? "held" : NULL);
    wait_for(&ready);
    if (!blocked_first) { /* let it accept SIGTERM again: main's own */
        sigset_t s = one(SIGTERM);
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
        CHECK_EQ(cap_thread_kill(cap_thread_self(), SIGTERM), 0); /* held by main */
        CHECK_EQ(cap_thread_kill(t, SIGTERM), 0);                  /* held by t */
        atomic_store(&done, 1);                                    /* t unblocks: ends */
        join(t);
        return 8;
    }
    CHECK_EQ(cap_thread_kill(t, SIGTERM), 0);
    atomic_store(&done, 1);
    join(t);
    return 9;
}

static int child_held(void)
{
    return child_kills(true);
}

static int child_main_holds(void)
{
    return child_kills(false);
}

static void *parked_forever(void *arg)
{
    (void)arg;
    char c;
    (void)read(p[0], &c, 1);
    return NULL;
}

/* The thread accepts SIGTERM: the call does not return. */
static int child_at_once(void)
{
    cap_thread_t t = spawn(parked_forever, NULL);
    cap_usleep(2000);
    CHECK_EQ(cap_thread_kill(t, SIGTERM), 0);
    return 10;
}

static void default_action(void)
{
    CHECK_EQ(pipe(report), 0);
    int (*children[])(void) = { child_held, child_main_holds, child_at_once };
    for (int i = 0; i < 3; i++) {
        pid_t pid = fork_child(children[i]);
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK(WIFSIGNALED(status));
        CHECK_EQ(WTERMSIG(status), SIGTERM);
    }
    char c;
    CHECK_EQ(read(report[0], &c, 1), 1); /* the first child's thread held it */
    CHECK_EQ(c, 'A');
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    install_handler(SIGUSR1, on_usr1, 0);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    errors();
    parked_read();
    from_a_handler();
    sem_goes_on();
    mutex_wait();
    suspend();
    blocked();
    waited();
    running();
    default_action();
    return 0;
}

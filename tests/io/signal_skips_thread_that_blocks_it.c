/* SPDX-License-Identifier: MIT */
/* Description: a process-directed signal never runs its handler in a
 * user thread that blocks it, although the kernel delivers it to the
 * worker that thread runs on (the workers block only what every thread
 * blocks). Main blocks SIGUSR1 and sends it to the process: the handler
 * runs in the one thread that accepts it (parked in a read, which then
 * fails with EINTR), and an SA_SIGINFO handler sees the sender's siginfo
 * (kill's SI_USER, sigqueue's value), not the runtime's re-delivery.
 * Then libuv's lock pattern: a thread blocks every signal and holds a
 * pipe lock (a byte read out of a pipe) that the SIGUSR2 handler also
 * takes; it signals the process while holding it. Run in that thread,
 * the handler's read of the empty pipe would block its kernel thread for
 * good (the holder never gets back). It must run elsewhere, or in the
 * holder once the holder let go and unblocked it: on one worker, still
 * pending then, it runs there before pthread_sigmask returns, as POSIX
 * says. On more workers the kernel may aim a signal at a worker with no
 * thread to run, whose scheduler runs the handler (no thread:
 * docs/pthread-compat.md): the checks there are that a thread never runs
 * it while it blocks it. Last, on one worker, a signal so kept is
 * reported by sigpending and taken by sigwaitinfo with its siginfo. */
#include <signal.h>
#include <stdatomic.h>

#include "io/io_util.h"

static cap_thread_t in_handler; /* who ran the last SIGUSR1 handler */
static siginfo_t seen;
static atomic_int usr1_runs;

static void on_usr1(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)uctx;
    in_handler = cap_thread_self();
    seen = *info;
    atomic_fetch_add(&usr1_runs, 1);
}

static int data_pipe[2];
static long read_result;
static int read_errno;

static void *reader(void *arg)
{
    (void)arg; /* SIGUSR1 not blocked: main's mask at start-up */
    char c;
    read_result = read(data_pipe[0], &c, 1);
    read_errno = errno;
    return NULL;
}

static int lock_pipe[2];
static cap_thread_t usr2_ran_in;
static atomic_int usr2_runs;
static cap_thread_t holder_self;
static atomic_int holder_blocks;    /* the holder blocks SIGUSR2 now */
static atomic_int ran_where_blocked; /* a SIGUSR2 handler ran in it then */

static void pipe_lock(void)
{
    pipe_byte_lock(lock_pipe);
}

static void pipe_unlock(void)
{
    pipe_byte_unlock(lock_pipe);
}

static void on_usr2(int sig)
{
    (void)sig;
    if (cap_thread_equal(cap_thread_self(), holder_self) && atomic_load(&holder_blocks))
        atomic_store(&ran_where_blocked, 1);
    pipe_lock();
    usr2_ran_in = cap_thread_self();
    atomic_fetch_add(&usr2_runs, 1);
    pipe_unlock();
}

static void *holder(void *arg)
{
    (void)arg;
    sigset_t all, old;
    sigfillset(&all);
    holder_self = cap_thread_self();
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
    atomic_store(&holder_blocks, 1);
    pipe_lock();
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    pipe_unlock();
    atomic_store(&holder_blocks, 0);
    /* Still pending for the process, it is delivered to this thread as
     * it unblocks it, before pthread_sigmask returns (POSIX). On one
     * worker no other thread ran since the kill, so it is still pending;
     * on more, another worker may have taken it. */
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    if (cap_worker_count() == 1) {
        CHECK_EQ(atomic_load(&usr2_runs), 1);
        CHECK(cap_thread_equal(usr2_ran_in, holder_self));
    }
    return NULL;
}

/* One worker: the signal kept for the process while the sender blocks
 * it is reported by sigpending and taken by sigwaitinfo, with the
 * sender's siginfo, before any other thread could run. */
static void *waiter(void *arg)
{
    (void)arg;
    sigset_t all, usr2, pending;
    sigfillset(&all);
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &all, NULL), 0);
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    CHECK_EQ(sigpending(&pending), 0);
    CHECK_EQ(sigismember(&pending, SIGUSR2), 1);
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    siginfo_t info;
    CHECK_EQ(sigwaitinfo(&usr2, &info), SIGUSR2);
    CHECK_EQ(info.si_code, SI_USER);
    CHECK_EQ(info.si_pid, getpid());
    CHECK_EQ(sigpending(&pending), 0);
    CHECK_EQ(sigismember(&pending, SIGUSR2), 0);
    return NULL;
}

static void block(int sig, int how)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK_EQ(pthread_sigmask(how, &s, NULL), 0);
}

/* Main, blocking SIGUSR1, sends it with send(); the reader gets it. */
static void one_round(int (*send)(void), int code)
{
    atomic_store(&usr1_runs, 0);
    memset(&seen, 0, sizeof seen);
    CHECK_EQ(pipe(data_pipe), 0);
    cap_thread_t r = spawn(reader, NULL);
    /* On one worker the reader is parked in its read once main sleeps. */
    cap_sleep_ns(2000000);
    block(SIGUSR1, SIG_BLOCK);
    CHECK_EQ(send(), 0);
    while (atomic_load(&usr1_runs) == 0)
        cap_sleep_ns(1000000);
    /* On more workers an idle one's scheduler may run it (no thread). */
    if (cap_worker_count() == 1)
        CHECK(cap_thread_equal(in_handler, r));
    else
        CHECK(!cap_thread_equal(in_handler, cap_thread_self()));
    CHECK_EQ(seen.si_signo, SIGUSR1);
    CHECK_EQ(seen.si_code, code);
    CHECK_EQ(seen.si_pid, getpid());
    if (code == SI_QUEUE)
        CHECK_EQ(seen.si_value.sival_int, 42);
    if (cap_worker_count() > 1) /* it may not have reached its read yet */
        CHECK_EQ(write(data_pipe[1], "d", 1), 1);
    join(r);
    if (cap_worker_count() == 1) {
        CHECK_EQ(read_result, -1);
        CHECK_EQ(read_errno, EINTR);
    } else {
        CHECK(read_result == 1 || (read_result == -1 && read_errno == EINTR));
    }
    CHECK_EQ(atomic_load(&usr1_runs), 1);
    block(SIGUSR1, SIG_UNBLOCK);
    close(data_pipe[0]);
    close(data_pipe[1]);
}

static int send_kill(void)
{
    return kill(getpid(), SIGUSR1);
}

static int send_queue(void)
{
    union sigval v = { .sival_int = 42 };
    return sigqueue(getpid(), SIGUSR1, v);
}

int main(void)
{
    struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    for (int i = 0; i < 20; i++) {
        one_round(send_kill, SI_USER);
        one_round(send_queue, SI_QUEUE);
    }

    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    CHECK_EQ(pipe(lock_pipe), 0);
    pipe_unlock(); /* the lock starts free */
    for (int i = 0; i < 20; i++) {
        atomic_store(&usr2_runs, 0);
        join(spawn(holder, NULL)); /* the handler runs in main, here or after */
        while (atomic_load(&usr2_runs) == 0)
            cap_sleep_ns(1000000);
        CHECK_EQ(atomic_load(&usr2_runs), 1);
        CHECK_EQ(atomic_load(&ran_where_blocked), 0);
    }
    if (cap_worker_count() == 1) {
        atomic_store(&usr2_runs, 0);
        join(spawn(waiter, NULL));
        cap_sleep_ns(2000000); /* a dispatch would have sent it to main */
        CHECK_EQ(atomic_load(&usr2_runs), 0);
    }
    return 0;
}

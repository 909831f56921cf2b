/* SPDX-License-Identifier: MIT */
/* Description: a handler may siglongjmp out of an async-signal-safe call
 * it interrupted (POSIX), and here that call is runtime code holding
 * locks and linked records, not a system call. The thread loops over
 * such calls (read and write of a pipe, poll, fcntl, dup2, sem_post,
 * waitpid WNOHANG, and now and then a waitpid that waits, offloaded),
 * while signals come and their handler jumps back to a sigsetjmp before
 * the loop:
 *  - a timer aimed at the kernel thread the loop runs on (a process
 *    signal for the runtime: numbered, it may interrupt a call), so that
 *    the handler runs on that thread, in the middle of those calls;
 *  - cap_thread_kill (pthread_kill) from another thread: a signal sent
 *    to the thread.
 * Each jump must be made as the call returns, not from its middle: on
 * the old code a jump out of a descriptor's or the offload pool's lock
 * left it taken, and a later call on it hung (CI, session 32: waitpid's
 * pool lock). After LANDINGS jumps of each kind the runtime still works:
 * the pipe, a parked read woken by another thread, the child reaped, the
 * signal unblocked after every landing (sigsetjmp's mask). */
#include <capriccio/sync.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "io/io_util.h"

enum { LANDINGS = 1500, SPARE_FD = 200 };

static sigjmp_buf env;
static volatile sig_atomic_t armed; /* env holds a live frame of loop_until */
static volatile sig_atomic_t jumped;
static int p[2];
static pid_t child;
static cap_sem_t sem;
static atomic_int stop_ticking;

/* A signal that comes before the sigsetjmp or after the loop (the timer
 * is set before it, the killer stops after it) returns. */
static void jump_back(int sig)
{
    (void)sig;
    if (!armed)
        return;
    jumped++;
    siglongjmp(env, 1);
}

/* One pass of calls that run the runtime's code without waiting, and
 * every 16th pass a waitpid that waits for the next signal. */
static void calls(unsigned pass)
{
    char c = 'x';
    CHECK_EQ(write(p[1], &c, 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    CHECK(poll(&pf, 1, 0) >= 0);
    CHECK(fcntl(p[0], F_GETFL) >= 0);
    CHECK_EQ(dup2(p[1], SPARE_FD), SPARE_FD);
    CHECK_EQ(cap_sem_post(&sem), 0);
    (void)cap_sem_trywait(&sem);
    int st;
    CHECK_EQ(waitpid(child, &st, WNOHANG), 0);
    if (pass % 16 == 15)
        (void)waitpid(child, &st, 0); /* the child never ends by itself */
}

static void loop_until(int landings)
{
    static volatile int landed; /* kept across the jumps */
    static volatile unsigned pass;
    landed = 0;
    armed = 0;
    if (sigsetjmp(env, 1) != 0) {
        landed++;
        sigset_t now;
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
        CHECK(!sigismember(&now, SIGALRM));
        CHECK(!sigismember(&now, SIGUSR1));
    }
    armed = 1;
    while (landed < landings)
        calls(pass++);
    armed = 0;
}

static void *kill_main(void *arg)
{
    cap_thread_t main_thread = *(cap_thread_t *)arg;
    struct timespec gap = { 0, 100000 };
    while (atomic_load(&stop_ticking) == 0) {
        CHECK_EQ(cap_thread_kill(main_thread, SIGUSR1), 0);
        nanosleep(&gap, NULL);
    }
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* not left behind by a failure */
        for (;;)
            pause();
    }
    install_handler(SIGALRM, jump_back, 0);
    install_handler(SIGUSR1, jump_back, SA_RESTART);

    /* The timer's signal goes to this kernel thread: the handler runs on
     * it, interrupting this thread's calls (a started thread stays on its
     * worker: not run with CAP_MIGRATE=1). */
    struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
    sev._sigev_un._tid = gettid();
    timer_t timer;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec every = { { 0, 200000 }, { 0, 200000 } };
    CHECK_EQ(timer_settime(timer, 0, &every, NULL), 0);
    loop_until(LANDINGS);
    struct itimerspec off = { { 0, 0 }, { 0, 0 } };
    CHECK_EQ(timer_settime(timer, 0, &off, NULL), 0);
    CHECK_EQ(timer_delete(timer), 0);

    /* The ticker blocks SIGALRM (made while main does): the handler
     * jumps into main's frames, so only main may take a SIGALRM the timer
     * sent while main was parked, which the runtime keeps for a thread
     * that accepts it (io/sigroute.h) and may deliver after the timer is
     * gone. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &alrm, NULL), 0);
    cap_thread_t self = cap_thread_self();
    cap_thread_t ticker = spawn(kill_main, &self);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL), 0);
    loop_until(LANDINGS);
    atomic_store(&stop_ticking, 1);
    join(ticker);
    CHECK(jumped >= 2 * LANDINGS); /* a jump handed over while one waits is dropped */

    /* Still works: the pipe both ways, a parked read woken by another
     * thread, the child reaped, the duplicate closed. */
    char c;
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    while (poll(&pf, 1, 0) == 1) /* a byte a jump left between its write and read */
        CHECK_EQ(read(p[0], &c, 1), 1);
    c = 'y';
    CHECK_EQ(write(p[1], &c, 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'y');
    parked_pipe_read_is_woken('z');
    CHECK_EQ(kill(child, SIGKILL), 0);
    int st;
    CHECK_EQ(waitpid(child, &st, 0), child);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CHECK_EQ(close(SPARE_FD), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that longjmps into a user thread parked
 * in a blocking call (bash's wait builtin does this from a trapped
 * signal's handler) lands there, as in Linux: the thread's call is
 * interrupted (whatever SA_RESTART says), cleaned up, and the thread
 * resumes at its sigsetjmp with the mask sigsetjmp saved. The handler
 * runs wherever the kernel put it: in a worker's scheduler when every
 * thread is parked, or on another thread that is running (a spinner on
 * the other worker). Parked calls: a pipe read, an offloaded waitpid on a
 * child that sleeps, a semaphore wait, a sleep. After each jump the
 * runtime still works: the pipe, new threads. Before, the jump abandoned
 * the scheduler's context and the call's records (bash under preload
 * crashed in its pool thread); then it was refused with a message. */
#include <capriccio/sync.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "io/io_util.h"

enum { PIPE_READ, WAITPID, SEM_WAIT, SLEEP, KINDS, ROUNDS = 3 };

static sigjmp_buf env;
static volatile sig_atomic_t jumps;
static atomic_int stop;

static void jump_back(int sig)
{
    (void)sig;
    jumps++;
    siglongjmp(env, 1);
}

static void *spinner(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        cap_yield();
    return NULL;
}

static void *echo_byte(void *arg)
{
    int *p = arg;
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(write(p[1], &c, 1), 1);
    return NULL;
}

/* The timer must fire once the thread has parked: on two workers the
 * handler may run beside the thread, on the spinner's worker, and a jump
 * into a thread that is running there is refused (README, Limits). One
 * that runs on the thread's own worker while it is on its way in is
 * handed to it and made as the call returns (io/sigsafe.h,
 * io/signal_jump_out_of_runtime_calls). 100 ms is far more than the way
 * in takes. */
static void park(int kind, int rfd, cap_sem_t *sem)
{
    struct itimerval it = { { 0, 0 }, { 0, 100000 } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    if (kind == PIPE_READ) {
        char c;
        (void)read(rfd, &c, 1);
    } else if (kind == WAITPID) {
        pid_t pid = fork();
        CHECK_GE(pid, 0);
        if (pid == 0) {
            usleep(1000000); /* outlives the timer */
            _exit(0);
        }
        int status;
        (void)waitpid(pid, &status, 0);
    } else if (kind == SEM_WAIT) {
        (void)cap_sem_wait(sem);
    } else {
        sleep(5);
    }
    fprintf(stderr, "kind %d: ", kind);
    CHECK(!"the call returned instead of the handler's jump");
}

int main(void)
{
    struct sigaction sa = { .sa_handler = jump_back, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    int p[2], q[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(pipe(q), 0);
    cap_sem_t sem;
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    sigset_t none;
    sigemptyset(&none);
    CHECK_EQ(sigprocmask(SIG_SETMASK, &none, NULL), 0);

    for (int with_spinner = 0; with_spinner < 2; with_spinner++) {
        atomic_store(&stop, 0);
        cap_thread_t sp = with_spinner ? spawn(spinner, NULL) : 0;
        for (int kind = 0; kind < KINDS; kind++) {
            for (volatile int round = 0; round < ROUNDS; round++) {
                volatile int before = jumps;
                if (sigsetjmp(env, 1) == 0)
                    park(kind, p[0], &sem);
                CHECK_EQ(jumps, before + 1);
                /* The mask sigsetjmp saved: SIGALRM not blocked. */
                sigset_t cur;
                CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
                CHECK_EQ(sigismember(&cur, SIGALRM), 0);
                /* Still working: a byte through a thread and back. */
                int pq[2] = { q[0], p[1] };
                cap_thread_t e = spawn(echo_byte, pq);
                CHECK_EQ(write(q[1], "x", 1), 1);
                char c;
                CHECK_EQ(read(p[0], &c, 1), 1);
                CHECK_EQ(c, 'x');
                join(e);
            }
        }
        if (with_spinner) {
            atomic_store(&stop, 1);
            join(sp);
        }
    }
    while (waitpid(-1, NULL, 0) > 0) /* the children the waits left */
        ;
    CHECK_EQ(cap_sem_destroy(&sem), 0);
    puts("ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a program started with the runtime's kick (SIGURG) and
 * the fault signals blocked works on every worker. It happens: this
 * library's system() starts its command with the kick blocked (its pool
 * thread's), so a command run on this library (preloaded into sh, say)
 * starts so, as does any program whose parent blocked SIGURG. Every
 * worker's kernel thread inherits that mask at start-up, and the kick and
 * the fault signals must not stay blocked there, whatever the program
 * blocks. Before, on two workers, the second worker's kernel thread kept
 * them blocked:
 *  - a mask change that blocked more kicks every worker and waits for
 *    each to apply it: it waited for good (sh under LD_PRELOAD, run by
 *    system(), hung at its first sigprocmask);
 *  - a fault in a thread on that worker, whose own mask accepts SIGSEGV,
 *    killed the process instead of reaching the handler.
 * The child, spawned with SIGURG and SIGSEGV blocked, unblocks SIGSEGV,
 * makes a thread fault on another worker than main's, then main on its
 * own, each taken back by a handler that jumps; then it blocks SIGUSR1.
 * The parent gives it 30 s and kills it if it hangs. */
#include <setjmp.h>

#include "io/io_util.h"

extern char **environ;

enum { CHILD_OK = 5 };

static sigjmp_buf back;
static int *volatile bad_address = (int *)16;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

/* Faults (SIGSEGV unblocked in the caller's mask): true if the handler
 * took the fault back here. */
static bool fault_taken_back(void)
{
    if (sigsetjmp(back, 1) == 0) {
        *bad_address = 1;
        return false;
    }
    return true;
}

static atomic_int claimed, taken_back, done;

/* One of a burst (worker 1 takes new threads from a busy worker): the
 * first that runs on another worker than main's faults there, with the
 * mask it inherited from main. The first by a claim taken before the
 * fault: with three workers two partners could run at once on the two
 * others, and both set the one jump buffer, so that a handler jumped
 * into the other thread's frames (the runtime stops such a program). */
static void *partner(void *arg)
{
    int main_worker = (int)(intptr_t)arg;
    int unclaimed = 0;
    if (cap_worker_id() == main_worker || !atomic_compare_exchange_strong(&claimed, &unclaimed, 1))
        return NULL;
    atomic_store(&taken_back, fault_taken_back());
    atomic_store(&done, 1);
    return NULL;
}

enum { BURST = 32 };

static int child(void)
{
    sigset_t m, one;
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &m), 0);
    CHECK_EQ(sigismember(&m, SIGURG), 1); /* started so */
    CHECK_EQ(sigismember(&m, SIGSEGV), 1);
    CHECK_EQ(sigismember(&m, SIGUSR1), 0);
    install_handler(SIGSEGV, on_segv, 0);
    sigemptyset(&one);
    sigaddset(&one, SIGSEGV);
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &one, NULL), 0); /* main's, and its new threads' */

    if (cap_worker_count() > 1) {
        int me = cap_worker_id();
        cap_thread_t t[BURST];
        for (int k = 0; k < BURST; k++) /* no park in between: the burst spreads */
            t[k] = spawn(partner, (void *)(intptr_t)me);
        while (!atomic_load(&done)) { /* busy, so the other workers take some */
        }
        CHECK_EQ(atomic_load(&taken_back), 1);
        for (int k = 0; k < BURST; k++)
            join(t[k]);
    }
    CHECK(fault_taken_back()); /* main, on its own worker */

    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &one, NULL), 0); /* blocks more: reaches every worker */
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &m), 0);
    CHECK_EQ(sigismember(&m, SIGUSR1), 1);
    return CHILD_OK;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    posix_spawnattr_t attr;
    CHECK_EQ(posix_spawnattr_init(&attr), 0);
    sigset_t start;
    sigemptyset(&start);
    sigaddset(&start, SIGURG);
    sigaddset(&start, SIGSEGV);
    CHECK_EQ(posix_spawnattr_setsigmask(&attr, &start), 0);
    CHECK_EQ(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK), 0);
    char *args[] = { argv[0], "child", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", NULL, &attr, args, environ), 0);
    CHECK_EQ(posix_spawnattr_destroy(&attr), 0);
    int status = 0;
    pid_t got = 0;
    for (int ms = 0; ms < 30000 && got == 0; ms += 10) {
        got = waitpid(pid, &status, WNOHANG);
        if (got == 0)
            cap_sleep_ns(10000000);
    }
    if (got == 0) {
        kill(pid, SIGKILL);
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        fprintf(stderr, "the child started with SIGURG and SIGSEGV blocked hung\n");
        return 1;
    }
    CHECK_EQ(got, pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_OK) {
        fprintf(stderr, "child status %#x, wanted exit %d\n", status, CHILD_OK);
        return 1;
    }
    puts("ok");
    return 0;
}

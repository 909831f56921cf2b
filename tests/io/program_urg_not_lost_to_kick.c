/* SPDX-License-Identifier: MIT */
/* Description: a SIGURG the program sends to a thread with
 * pthread_kill (cap_thread_kill) runs its handler even when one of the
 * runtime's kicks, which share that signal number (io/sigintr.h,
 * CAP__SIG_KICK), is pending on the thread's kernel thread at the moment
 * the runtime raises the program's signal there. SIGURG is a standard
 * signal: one instance is pending at a time, and a raise that finds a
 * kick pending merges into it, so the delivery that follows was the
 * kick's alone and the program's handler never ran (seen once in 10,000
 * runs of io/kick_restarts_unseen_call, sanitized, CAP_MIGRATE=1: its
 * main waited for good). Thread A blocks its worker in a read the
 * runtime does not see; main sends it SIGURG, whose kick makes A's
 * worker take it and raise it on itself (io/sigdirect.c,
 * cap__sig_pending_kicked). A tracer process stops that worker at the
 * entry of that raise (ptrace, PTRACE_SYSCALL: its tgkill of SIGURG to
 * itself) and keeps it there while main sends A SIGUSR1, whose kick is
 * then pending there; once the tracer sees it pending (SigPnd) it lets
 * the raise go on. Both handlers must run in A, and A's read go on
 * (both have SA_RESTART) and return the byte main writes. Skipped where
 * ptrace is refused. Two workers. */
#include <sys/prctl.h>
#include <sys/ptrace.h>

#include "fork_util.h"
#include "io/io_util.h"
#include "io/syscall_tracer.h"

enum { TRACER_OK = 0, TRACER_SKIP = 77 };

static int p[2];                           /* A's pipe, made past the runtime: blocking */
static int to_tracer[2], from_tracer[2];   /* made before the tracer's fork */
static atomic_int reading;
static atomic_long kthread;                /* A's kernel thread */
static volatile sig_atomic_t urgs, usr1s;
static cap_thread_t urg_in, usr1_in;       /* where each handler ran */

static void on_urg(int sig)
{
    (void)sig;
    urg_in = cap_thread_self();
    urgs++;
}

static void on_usr1(int sig)
{
    (void)sig;
    usr1_in = cap_thread_self();
    usr1s++;
}

/* Blocks its worker in a read the runtime does not see; returns the byte
 * or -errno. */
static void *raw_reader(void *arg)
{
    (void)arg;
    kthread = syscall(SYS_gettid);
    char c = 0;
    atomic_store(&reading, 1);
    long n = syscall(SYS_read, p[0], &c, 1);
    return (void *)(n == 1 ? (long)c : -errno);
}

/* Whether thread tid, stopped at a system call, is entering a tgkill of
 * SIGURG to itself. */
static bool at_urg_raise(pid_t tid)
{
    struct __ptrace_syscall_info info;
    memset(&info, 0, sizeof info);
    CHECK_GT(ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof info, &info), 0);
    return info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_tgkill &&
           (pid_t)info.entry.args[1] == tid && (int)info.entry.args[2] == SIGURG;
}

/* Whether thread tid of process pid has SIGURG pending (its own set). */
static bool urg_pending(pid_t pid, pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[256];
    unsigned long long pending = 0;
    bool found = false;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "SigPnd: %llx", &pending) == 1) {
            found = true;
            break;
        }
    fclose(f);
    CHECK(found);
    return (pending >> (SIGURG - 1)) & 1;
}

/* The tracer process: stops A's kernel thread at its raise of SIGURG,
 * tells main, waits for a kick to be pending there, and lets it go.
 * Exit status TRACER_OK, TRACER_SKIP, or 1 on a failed check. */
static int trace(void)
{
    pid_t pid = getppid();
    pid_t tid;
    CHECK_EQ(read(to_tracer[0], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (!tracer_attach_syscalls(tid)) {
        put_byte(from_tracer[1], 'S');
        return TRACER_SKIP;
    }
    put_byte(from_tracer[1], 'A');
    tracer_run_until(tid, at_urg_raise);
    put_byte(from_tracer[1], 'B');
    /* main's SIGUSR1 brings a kick, queued while the thread is stopped. */
    while (!urg_pending(pid, tid))
        usleep(1000);
    CHECK_EQ(ptrace(PTRACE_DETACH, tid, 0, 0), 0); /* the raise goes on */
    return TRACER_OK;
}

int main(void)
{
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama, where present */
    install_handler(SIGURG, on_urg, SA_RESTART);
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    CHECK_EQ(syscall(SYS_pipe2, p, 0), 0);
    CHECK_EQ(pipe(to_tracer), 0);
    CHECK_EQ(pipe(from_tracer), 0);
    pid_t tracer = fork_child(trace);

    /* A on the other worker: main does not yield until A runs. */
    cap_thread_t a = spawn(raw_reader, NULL);
    while (!atomic_load(&reading))
        ;
    pid_t tid = (pid_t)atomic_load(&kthread);
    if (tid == (pid_t)syscall(SYS_gettid)) {
        kill(tracer, SIGKILL);
        SKIP("the reader did not start on the other worker");
    }
    cap_usleep(20000); /* in the read, most likely (either way is right) */
    CHECK_EQ(write(to_tracer[1], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (take_byte(from_tracer[0]) == 'S') {
        CHECK_EQ(child_exit_status(tracer), TRACER_SKIP);
        SKIP("ptrace is refused here");
    }

    CHECK_EQ(cap_thread_kill(a, SIGURG), 0); /* its kick: A's worker raises it */
    CHECK_EQ(take_byte(from_tracer[0]), 'B'); /* stopped at that raise */
    CHECK_EQ(cap_thread_kill(a, SIGUSR1), 0); /* a kick pending there */
    CHECK_EQ(child_exit_status(tracer), TRACER_OK);
    while (usr1s == 0 || urgs == 0)
        cap_usleep(1000);
    CHECK(cap_thread_equal(urg_in, a));
    CHECK(cap_thread_equal(usr1_in, a));
    CHECK_EQ(syscall(SYS_write, p[1], "x", 1), 1);
    CHECK_EQ((long)join(a), 'x');
    CHECK_EQ(urgs, 1);
    CHECK_EQ(usr1s, 1);
    return 0;
}

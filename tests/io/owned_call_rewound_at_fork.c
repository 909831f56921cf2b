/* SPDX-License-Identifier: MIT */
/* Description: a signal that lands between an owned pipe's ownership
 * test and its system call, and whose handler forks (which gives the
 * pipe back its blocking mode), makes the call start over at the test
 * (arch/ownedxfer.h): a read of the empty pipe and a sendfile into the
 * full one then park their thread instead of blocking the worker. The
 * signal is made exact by a hardware breakpoint on the system call
 * instruction of that piece (perf_event_open, sigtrap): the handler runs
 * right before the instruction. On one worker a call that blocked its
 * worker would hang the test, as main, which fills or drains the pipe,
 * shares that worker. Skipped where perf events or hardware breakpoints
 * are not allowed, or where the library has no symbol table. */
#include <sys/sendfile.h>
#include <time.h>

#include "fork_util.h"
#include "io/hw_breakpoint.h"
#include "io/io_util.h"
#include "io/lib_symbol.h"

enum { PIPE_BYTES = 4096 };

static uintptr_t syscall_insn; /* the owned piece's system call instruction */
static int p[2];               /* the pipe the calls are made on */
static int source;             /* sendfile's input: one byte, 's' */
static int breakpoint = -1;    /* the calling thread's perf event */
static atomic_int hits;        /* SIGTRAPs taken, each of which forked */
static atomic_int bad_code;    /* a SIGTRAP that was not the breakpoint's */
static pid_t children[2];

/* Right before the system call: once, fork (the child leaves at once),
 * which gives the pipe back as a crash handler's fork would. */
static void on_trap(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    (void)uctx;
    if (si->si_code != TRAP_PERF) {
        atomic_store(&bad_code, si->si_code);
        return;
    }
    CHECK_EQ(ioctl(breakpoint, PERF_EVENT_IOC_DISABLE, 0), 0);
    int n = atomic_load(&hits);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    CHECK(pid > 0);
    children[n] = pid;
    atomic_store(&hits, n + 1);
}

/* Arms the breakpoint on this thread's kernel thread; skips the test if
 * the kernel refuses it. */
static void arm(void)
{
    breakpoint = hw_breakpoint_at(syscall_insn);
    if (breakpoint < 0) {
        fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
        SKIP("no hardware breakpoint with sigtrap for this process");
    }
}

static void disarm(void)
{
    CHECK_EQ(close(breakpoint), 0);
    breakpoint = -1;
}

static void *empty_pipe_reader(void *arg)
{
    (void)arg;
    char c = 0;
    arm();
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'r');
    disarm();
    return NULL;
}

static void *full_pipe_sender(void *arg)
{
    (void)arg;
    off_t off = 0;
    arm();
    CHECK_EQ(sendfile(p[1], source, &off, 1), 1);
    CHECK_EQ(off, 1);
    disarm();
    return NULL;
}

/* Parks main until the handler has run `n` times: main gets its worker
 * back only if the interrupted call parked its thread. The bound only
 * turns a call that never reached the breakpoint into a message. */
static void await_hits(int n)
{
    for (int ms = 0; atomic_load(&hits) < n; ms++) {
        CHECK_EQ(atomic_load(&bad_code), 0);
        if (ms == 20000) {
            fprintf(stderr, "the call never reached the owned system call\n");
            exit(1);
        }
        usleep(1000);
    }
}

int main(void)
{
    syscall_insn = hidden_symbol("cap__owned_xfer_syscall");
    if (syscall_insn == 0)
        SKIP("the library has no symbol table");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    CHECK_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
    CHECK_EQ(pipe(p), 0);

    /* A read of the empty pipe. */
    cap_thread_t t = spawn(empty_pipe_reader, NULL);
    await_hits(1);
    CHECK_EQ(write(p[1], "r", 1), 1);
    join(t);
    CHECK_EQ(child_exit_status(children[0]), 0);

    /* A sendfile into the full pipe, given back already: a fork puts
     * every pipe of the runtime back, so this one is made again owned
     * (pipe) for the test. */
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES), PIPE_BYTES);
    static char fill[PIPE_BYTES];
    memset(fill, 'f', sizeof fill);
    CHECK_EQ(write(p[1], fill, sizeof fill), (long)sizeof fill);
    source = unlinked_temp_file(0);
    CHECK_EQ(pwrite(source, "s", 1, 0), 1);
    t = spawn(full_pipe_sender, NULL);
    await_hits(2);
    static char got[PIPE_BYTES + 1];
    read_exactly_n(p[0], got, sizeof got, sizeof got);
    CHECK_EQ(memcmp(got, fill, sizeof fill), 0);
    CHECK_EQ(got[PIPE_BYTES], 's');
    join(t);
    CHECK_EQ(child_exit_status(children[1]), 0);
    return 0;
}

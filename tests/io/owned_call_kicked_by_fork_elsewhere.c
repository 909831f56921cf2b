/* SPDX-License-Identifier: MIT */
/* Description: a thread stopped between an owned pipe's ownership test
 * and its system call while a thread of the other worker forks (which
 * gives the pipe back its blocking mode) starts over at the test once it
 * runs again, because the fork kicks its worker (io/fd.c,
 * given_back_kick; arch/ownedxfer.h): it then parks, and a ticker of its
 * worker goes on until main writes the byte it reads. Without the kick
 * the read is made on the now blocking pipe and holds the worker: the
 * ticker stops and the test hangs. The stop is exact: a tracer process
 * puts a hardware breakpoint (ptrace, debug registers) on the system call
 * instruction of that piece for the reader's kernel thread only, keeps
 * the thread stopped there while the fork happens, and lets it go without
 * the SIGTRAP. Skipped where ptrace or the breakpoint is refused, or the
 * library has no symbol table. Two workers. */
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "fork_util.h"
#include "io/io_util.h"
#include "io/lib_symbol.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

enum { CANDIDATES = 8, ROLE_NONE = 1, ROLE_READER, ROLE_TICKER, ROLE_FORKER };
enum { TRACER_OK = 0, TRACER_SKIP = 77 };

static uintptr_t syscall_insn;
static int to_tracer[2], armed[2], stopped[2]; /* made before the tracer's fork */
static int p[2];                                /* the owned pipe, made after it */
static atomic_int worker_of[CANDIDATES], role[CANDIDATES];
static atomic_long ticks;
static atomic_int stop_ticking;

static long set_debugreg(pid_t tid, int i, unsigned long v)
{
    return ptrace(PTRACE_POKEUSER, tid, (void *)offsetof(struct user, u_debugreg[i]), (void *)v);
}

/* The tracer process: breaks the reader's kernel thread at the system
 * call instruction, tells the forker, and lets the thread go once the
 * fork is done. Its exit status: TRACER_OK, TRACER_SKIP, or 1 on a
 * failed check. */
static int trace(void)
{
    pid_t tid;
    CHECK_EQ(read(to_tracer[0], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
        put_byte(armed[1], 'S');
        return TRACER_SKIP;
    }
    int st;
    CHECK_EQ(ptrace(PTRACE_INTERRUPT, tid, 0, 0), 0);
    CHECK_EQ(waitpid(tid, &st, __WALL), tid);
    CHECK(WIFSTOPPED(st));
    if (set_debugreg(tid, 0, syscall_insn) != 0 || set_debugreg(tid, 7, 1) != 0) {
        ptrace(PTRACE_DETACH, tid, 0, 0);
        put_byte(armed[1], 'S');
        return TRACER_SKIP;
    }
    CHECK_EQ(ptrace(PTRACE_CONT, tid, 0, 0), 0);
    put_byte(armed[1], 'A');
    /* Until the breakpoint: other signals the thread gets are passed on. */
    for (;;) {
        CHECK_EQ(waitpid(tid, &st, __WALL), tid);
        CHECK(WIFSTOPPED(st));
        int sig = WSTOPSIG(st);
        siginfo_t si;
        if (sig == SIGTRAP && (st >> 16) == 0 &&
            ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 && si.si_code == TRAP_HWBKPT)
            break;
        bool event_stop = (st >> 16) != 0;
        CHECK_EQ(ptrace(PTRACE_CONT, tid, 0, (void *)(long)(event_stop ? 0 : sig)), 0);
    }
    struct user_regs_struct regs;
    CHECK_EQ(ptrace(PTRACE_GETREGS, tid, 0, &regs), 0);
    CHECK_EQ(regs.rip, syscall_insn);
    put_byte(stopped[1], 'B');
    CHECK_EQ(take_byte(to_tracer[0]), 'F'); /* the forker has forked */
    CHECK_EQ(set_debugreg(tid, 7, 0), 0);
    CHECK_EQ(ptrace(PTRACE_DETACH, tid, 0, 0), 0); /* without the SIGTRAP */
    return TRACER_OK;
}

static void read_owned_pipe(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    CHECK_EQ(write(to_tracer[1], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (take_byte(armed[0]) == 'S')
        return; /* main skips */
    CHECK_EQ(take_byte(p[0]), 'x');
}

static void tick(void)
{
    while (!atomic_load(&stop_ticking)) {
        atomic_fetch_add(&ticks, 1);
        cap_sleep_ns(200000);
    }
}

static int exit_at_once(void)
{
    return 0;
}

static void fork_when_stopped(void)
{
    CHECK_EQ(take_byte(stopped[0]), 'B');
    run_in_fork_child(exit_at_once);
    put_byte(to_tracer[1], 'F');
}

static void *candidate(void *arg)
{
    int i = (int)(intptr_t)arg;
    atomic_store(&worker_of[i], cap_worker_id() + 1);
    int r;
    while ((r = atomic_load(&role[i])) == 0)
        cap_sleep_ns(100000);
    if (r == ROLE_READER)
        read_owned_pipe();
    else if (r == ROLE_TICKER)
        tick();
    else if (r == ROLE_FORKER)
        fork_when_stopped();
    return NULL;
}

int main(void)
{
    syscall_insn = hidden_symbol("cap__owned_xfer_syscall");
    if (syscall_insn == 0)
        SKIP("the library has no symbol table");
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama, where present */
    CHECK_EQ(pipe(to_tracer), 0);
    CHECK_EQ(pipe(armed), 0);
    CHECK_EQ(pipe(stopped), 0);
    pid_t tracer = fork_child(trace);
    CHECK_EQ(pipe(p), 0); /* owned: no fork since */
    CHECK_EQ(kernel_nonblock(p[0]), 1);

    cap_thread_t t[CANDIDATES];
    for (int i = 0; i < CANDIDATES; i++)
        t[i] = spawn(candidate, (void *)(intptr_t)i);
    for (int i = 0; i < CANDIDATES; i++)
        while (atomic_load(&worker_of[i]) == 0)
            cap_sleep_ns(100000);
    /* The reader and the ticker on one worker, the forker on the other. */
    int reader = 0, ticker = -1, forker = -1;
    for (int i = 1; i < CANDIDATES; i++) {
        if (worker_of[i] == worker_of[reader] && ticker < 0)
            ticker = i;
        else if (worker_of[i] != worker_of[reader] && forker < 0)
            forker = i;
    }
    if (ticker < 0 || forker < 0) {
        kill(tracer, SIGKILL);
        SKIP("the candidates did not spread over both workers");
    }
    for (int i = 0; i < CANDIDATES; i++)
        if (i != reader && i != ticker && i != forker)
            atomic_store(&role[i], ROLE_NONE);
    atomic_store(&role[ticker], ROLE_TICKER);
    atomic_store(&role[forker], ROLE_FORKER);
    atomic_store(&role[reader], ROLE_READER);

    int tracer_status = child_exit_status(tracer);
    if (tracer_status == TRACER_SKIP) {
        put_byte(stopped[1], 'B'); /* the forker forks all the same */
        CHECK_EQ(take_byte(to_tracer[0]), 'F');
        atomic_store(&stop_ticking, 1);
        for (int i = 0; i < CANDIDATES; i++)
            join(t[i]);
        SKIP("ptrace or a hardware breakpoint is refused here");
    }
    CHECK_EQ(tracer_status, TRACER_OK);
    /* The reader's worker runs again: its ticker moves. */
    long before = atomic_load(&ticks);
    while (atomic_load(&ticks) == before)
        cap_sleep_ns(200000);
    put_byte(p[1], 'x');
    atomic_store(&stop_ticking, 1);
    for (int i = 0; i < CANDIDATES; i++)
        join(t[i]);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a thread stopped between an owned descriptor's ownership
 * test and its system call while a thread of the other worker gives the
 * descriptor back its blocking mode starts over at the test once it runs
 * again, because the give-back kicks its worker (io/fd.c,
 * given_back_kick; arch/ownedxfer.h): it then parks, and a ticker of its
 * worker goes on until main makes what it waits for. Without the kick
 * the call is made on the now blocking descriptor and holds the worker:
 * the ticker stops and the test hangs. Two cases: the read of an owned
 * pipe, given back by a fork, and the accept of an owned listener, given
 * back by being sent with SCM_RIGHTS (the socket's kick since session
 * 65; before, it kicked nobody). The stop is exact: a tracer process
 * puts a hardware breakpoint (ptrace, debug registers) on the system
 * call instruction of that piece for the caller's kernel thread only,
 * keeps the thread stopped there while the give-back happens, and lets
 * it go without the SIGTRAP. Skipped where ptrace or the breakpoint is
 * refused, or the library has no symbol table. Two workers. */
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "fork_util.h"
#include "io/io_util.h"
#include "io/lib_symbol.h"
#include "io/worker_roles.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

enum { ROLE_CALLER = ROLE_NONE + 1, ROLE_TICKER, ROLE_GIVER };
enum { TRACER_OK = 0, TRACER_SKIP = 77 };

/* A case: the owned descriptor (made after the tracer's fork), the owned
 * call that waits on it, its give-back, and how main ends the wait once
 * the caller's worker runs again. */
struct give_back_case {
    void (*make)(void);
    void (*call)(void);
    void (*give_back)(void);
    void (*end_wait)(void);
};

static uintptr_t syscall_insn;
static int to_tracer[2], armed[2], stopped[2]; /* made before the tracer's fork */
static atomic_long ticks;
static atomic_int stop_ticking;
static const struct give_back_case *current;

static long set_debugreg(pid_t tid, int i, unsigned long v)
{
    return ptrace(PTRACE_POKEUSER, tid, (void *)offsetof(struct user, u_debugreg[i]), (void *)v);
}

/* The tracer process: breaks the caller's kernel thread at the system
 * call instruction, tells the giver, and lets the thread go once the
 * give-back is done. Its exit status: TRACER_OK, TRACER_SKIP, or 1 on a
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
    CHECK_EQ(take_byte(to_tracer[0]), 'G'); /* the giver has given it back */
    CHECK_EQ(set_debugreg(tid, 7, 0), 0);
    CHECK_EQ(ptrace(PTRACE_DETACH, tid, 0, 0), 0); /* without the SIGTRAP */
    return TRACER_OK;
}

/* The pipe case: an owned pipe's read, given back by a fork. */
static int p[2];

static void make_pipe(void)
{
    CHECK_EQ(pipe(p), 0); /* owned: no fork since */
    CHECK_EQ(kernel_nonblock(p[0]), 1);
}

static void read_pipe(void)
{
    CHECK_EQ(take_byte(p[0]), 'x');
}

static int exit_at_once(void)
{
    return 0;
}

static void fork_child_now(void)
{
    run_in_fork_child(exit_at_once);
}

static void write_pipe(void)
{
    put_byte(p[1], 'x');
}

/* The listener case: an owned listener's accept, given back by being
 * sent with SCM_RIGHTS. */
static int listener, port, carrier[2];

static void make_listener(void)
{
    listener = tcp_listener(SOCK_STREAM, 4, &port);
    CHECK_EQ(kernel_nonblock(listener), 1);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, carrier), 0);
}

static void accept_one(void)
{
    int c = accept(listener, NULL, NULL);
    CHECK_GE(c, 0);
    CHECK_EQ(take_byte(c), 'x');
    CHECK_EQ(close(c), 0);
}

static void send_listener(void)
{
    send_fd(carrier[0], listener);
    CHECK_EQ(kernel_nonblock(listener), 0); /* given back: blocking */
}

static int client = -1;

static void connect_one(void)
{
    client = tcp_connect(port);
    CHECK_GE(client, 0);
    put_byte(client, 'x');
}

static const struct give_back_case pipe_case = { make_pipe, read_pipe, fork_child_now,
                                                 write_pipe };
static const struct give_back_case listener_case = { make_listener, accept_one, send_listener,
                                                     connect_one };

static void make_call(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    CHECK_EQ(write(to_tracer[1], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (take_byte(armed[0]) == 'S')
        return; /* main skips */
    current->call();
}

static void tick(void)
{
    while (!atomic_load(&stop_ticking)) {
        atomic_fetch_add(&ticks, 1);
        cap_sleep_ns(200000);
    }
}

static void give_back_when_stopped(void)
{
    CHECK_EQ(take_byte(stopped[0]), 'B');
    current->give_back();
    put_byte(to_tracer[1], 'G');
}

static void play(int role)
{
    if (role == ROLE_CALLER)
        make_call();
    else if (role == ROLE_TICKER)
        tick();
    else
        give_back_when_stopped();
}

/* One case; false where it had to be skipped. */
static bool run(const struct give_back_case *c)
{
    current = c;
    CHECK_EQ(pipe(to_tracer), 0);
    CHECK_EQ(pipe(armed), 0);
    CHECK_EQ(pipe(stopped), 0);
    pid_t tracer = fork_child(trace);
    c->make();
    atomic_store(&stop_ticking, 0);
    roles_start(play);
    /* The caller and the ticker on one worker, the giver on the other. */
    int caller = 0, ticker = -1, giver = -1;
    for (int i = 1; i < ROLE_CANDIDATES; i++) {
        if (roles_worker(i) == roles_worker(caller) && ticker < 0)
            ticker = i;
        else if (roles_worker(i) != roles_worker(caller) && giver < 0)
            giver = i;
    }
    if (ticker < 0 || giver < 0) {
        kill(tracer, SIGKILL);
        SKIP("the candidates did not spread over both workers");
    }
    roles_cast(3, (int[]){ ticker, giver, caller }, (int[]){ ROLE_TICKER, ROLE_GIVER, ROLE_CALLER });

    int tracer_status = child_exit_status(tracer);
    bool skipped = tracer_status == TRACER_SKIP;
    if (skipped) {
        put_byte(stopped[1], 'B'); /* the giver gives back all the same */
        CHECK_EQ(take_byte(to_tracer[0]), 'G');
    } else {
        CHECK_EQ(tracer_status, TRACER_OK);
        /* The caller's worker runs again: its ticker moves. */
        long before = atomic_load(&ticks);
        while (atomic_load(&ticks) == before)
            cap_sleep_ns(200000);
        c->end_wait();
    }
    atomic_store(&stop_ticking, 1);
    roles_join();
    int fds[] = { to_tracer[0], to_tracer[1], armed[0], armed[1], stopped[0], stopped[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        CHECK_EQ(close(fds[i]), 0);
    return !skipped;
}

int main(void)
{
    syscall_insn = hidden_symbol("cap__owned_xfer_syscall");
    if (syscall_insn == 0)
        SKIP("the library has no symbol table");
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama, where present */
    if (!run(&pipe_case))
        SKIP("ptrace or a hardware breakpoint is refused here");
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    CHECK(run(&listener_case));
    CHECK_EQ(close(client), 0);
    CHECK_EQ(close(recv_fd(carrier[1])), 0);
    CHECK_EQ(close(carrier[0]), 0);
    CHECK_EQ(close(carrier[1]), 0);
    CHECK_EQ(close(listener), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: on a blocking listener the runtime does not own (made by
 * raw system calls here, as an inherited or socket-activated one is), a
 * connection taken by another process sharing the listener between the
 * wake-up of an accepting thread and its accept leaves the thread parked
 * for the next connection, its worker free. The moment is made exact by
 * a tracer process that stops our worker's kernel thread at the entry of
 * each system call (ptrace, PTRACE_SYSCALL) and, at the first accept4 or
 * io_uring_enter the accepting thread makes (its stack pointer says so)
 * once a connection is queued, takes the connection itself: whatever
 * look at readiness came before, the kernel's call then finds nothing.
 * Before (session 64) the accept was the kernel's, made on the worker
 * after a poll, and waited there: with one worker, main, which makes the
 * second connection, never ran again. Now it is an io_uring accept that
 * does not wait (io/nowait_ring.h). Skipped where the kernel cannot make
 * that accept (before Linux 6.10, io_uring disabled: the runtime then
 * falls back to the old way, README, Limits), and where ptrace is
 * refused. One worker. */
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>

#include "fork_util.h"
#include "io/io_util.h"
#include "io/nowait_accept_probe.h"
#include "io/syscall_tracer.h"

enum { STACK_SPAN = 1 << 20 }; /* a stack pointer this far below the mark is the acceptor's */

static int listener, port;
static int to_tracer[2], from_tracer[2];
static atomic_int accepting;
static atomic_uintptr_t acceptor_mark; /* an address near the top of its stack */

/* Whether the stopped thread tid is entering, on the acceptor's stack, a
 * system call that may accept (while a connection is queued). */
static bool at_accepting_call(pid_t tid)
{
    struct __ptrace_syscall_info info;
    memset(&info, 0, sizeof info);
    CHECK_GT(ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof info, &info), 0);
    if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
        return false;
    bool call = (info.entry.nr == SYS_accept4 && (int)info.entry.args[0] == listener) ||
                info.entry.nr == SYS_accept || info.entry.nr == SYS_io_uring_enter;
    uintptr_t mark = atomic_load(&acceptor_mark);
    return call && info.stack_pointer < mark && mark - info.stack_pointer < STACK_SPAN &&
           readable_now(listener);
}

/* The tracer process (it shares the listener): exit status 0, 77 when
 * ptrace is refused, 1 on a failed check. */
static int trace(void)
{
    pid_t tid;
    CHECK_EQ(read(to_tracer[0], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (!tracer_attach_syscalls(tid)) {
        put_byte(from_tracer[1], 'S');
        return 77;
    }
    put_byte(from_tracer[1], 'A');
    tracer_run_until(tid, at_accepting_call);
    /* The thread is about to accept: the connection is taken here first
     * (blocking, with one queued: at once). */
    int stolen = (int)syscall(SYS_accept4, listener, NULL, NULL, SOCK_CLOEXEC);
    CHECK_GE(stolen, 0);
    char c = 0;
    CHECK_EQ(syscall(SYS_read, stolen, &c, 1), 1);
    CHECK_EQ(c, 'a'); /* the first connection's */
    CHECK_EQ(ptrace(PTRACE_DETACH, tid, 0, 0), 0);
    put_byte(from_tracer[1], 'T');
    CHECK_EQ(close(stolen), 0);
    return 0;
}

static struct sockaddr_in second_local; /* the second connection's own end */

static void *acceptor(void *arg)
{
    (void)arg;
    int here = 0;
    atomic_store(&acceptor_mark, (uintptr_t)&here);
    atomic_store(&accepting, 1);
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    int c = accept4(listener, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    CHECK_GE(c, 0);
    /* The second connection, named as the kernel names it. */
    CHECK_EQ(len, (socklen_t)sizeof peer);
    CHECK_EQ(peer.sin_family, AF_INET);
    CHECK_EQ(peer.sin_port, second_local.sin_port);
    CHECK(fcntl(c, F_GETFD) & FD_CLOEXEC);
    CHECK_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0); /* blocking, as the program sees it */
    CHECK_EQ(take_byte(c), 'b');
    CHECK_EQ(close(c), 0);
    return NULL;
}

int main(void)
{
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama, where present */
    listener = raw_tcp_listener(16, &port);
    if (!kernel_accepts_without_waiting(listener))
        SKIP("no io_uring accept that does not wait on this kernel");

    /* The acceptor tries once, finds nothing and parks; then the tracer
     * (which learns its stack's mark by the fork) attaches. */
    cap_thread_t t = spawn(acceptor, NULL);
    while (atomic_load(&accepting) == 0)
        cap_usleep(1000);
    cap_usleep(2000);
    CHECK_EQ(pipe(to_tracer), 0);
    CHECK_EQ(pipe(from_tracer), 0);
    pid_t tracer = fork();
    CHECK_GE(tracer, 0);
    if (tracer == 0)
        _exit(trace());
    pid_t tid = (pid_t)syscall(SYS_gettid); /* the one worker's */
    CHECK_EQ(write(to_tracer[1], &tid, sizeof tid), (ssize_t)sizeof tid);
    if (take_byte(from_tracer[0]) == 'S') {
        CHECK_EQ(child_exit_status(tracer), 77);
        SKIP("ptrace is refused here");
    }
    int first = raw_tcp_connect(port, NULL);
    CHECK_EQ(syscall(SYS_write, first, "a", 1), 1);
    /* Taken by the tracer once the acceptor woke for it; main runs again
     * only if the acceptor's accept then parked. */
    CHECK_EQ(take_byte(from_tracer[0]), 'T');
    CHECK_EQ(child_exit_status(tracer), 0);
    int second = raw_tcp_connect(port, &second_local);
    CHECK_EQ(syscall(SYS_write, second, "b", 1), 1);
    join(t);
    CHECK_EQ(kernel_nonblock(listener), 0); /* never switched */
    CHECK_EQ(close(first), 0);
    CHECK_EQ(close(second), 0);
    CHECK_EQ(close(listener), 0);
    return 0;
}

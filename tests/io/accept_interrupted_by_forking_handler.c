/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that forks while its thread is inside
 * the runtime's accept on a blocking listener the runtime does not own
 * (an io_uring accept on the worker's own ring, io/nowait_ring.h) leaves
 * both processes whole. The child, which returns from the handler into
 * the same call, must not touch the parent's ring (its queues are shared
 * kernel memory) nor crash on it: its call says it found nothing and
 * looks again. The two processes share the listener, so either may take
 * the queued connection (the parent's call usually does; a parent
 * descheduled after the fork loses it to the child); the other takes
 * the next, and each must get exactly one of the two. The moment is
 * made exact by a hardware breakpoint on liburing's io_uring_submit
 * (perf_event_open, sigtrap) that acts when the accepting thread's
 * stack makes the call with a connection queued. Skipped where the
 * kernel cannot make an io_uring accept that does not wait, and where
 * perf events or breakpoints are refused. One worker. */
#include <dlfcn.h>
#include <netinet/in.h>
#include <ucontext.h>

#include "fork_util.h"
#include "io/hw_breakpoint.h"
#include "io/io_util.h"
#include "io/nowait_accept_probe.h"

enum { STACK_SPAN = 1 << 20 }; /* a stack pointer this far below the mark is the acceptor's */

static int listener, port;
static pid_t parent;
static int breakpoint = -1;
static atomic_uintptr_t acceptor_mark;
static atomic_int child = 0; /* the handler's child, in the parent */
static atomic_int bad_code;

/* At io_uring_submit's entry: when the acceptor makes it with a
 * connection queued, once, fork. */
static void on_trap(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    if (si->si_code != TRAP_PERF) {
        atomic_store(&bad_code, si->si_code);
        return;
    }
    uintptr_t sp = (uintptr_t)((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RSP];
    uintptr_t mark = atomic_load(&acceptor_mark);
    if (sp >= mark || mark - sp >= STACK_SPAN || !readable_now(listener))
        return;
    CHECK_EQ(ioctl(breakpoint, PERF_EVENT_IOC_DISABLE, 0), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid > 0)
        atomic_store(&child, pid);
}

static void arm(uintptr_t addr)
{
    breakpoint = hw_breakpoint_at(addr);
    if (breakpoint < 0) {
        fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
        SKIP("no hardware breakpoint with sigtrap for this process");
    }
}

static atomic_int armed;

static atomic_int accepted; /* the parent's acceptor's call returned */
static char parent_got;     /* the byte of the connection it took */

/* Takes one connection and reads its byte: in the parent, it keeps it in
 * parent_got; in the handler's child, it exits with CHILD_GOT + it. */
enum { CHILD_GOT = 10 };

static void *acceptor(void *arg)
{
    (void)arg;
    int here = 0;
    atomic_store(&acceptor_mark, (uintptr_t)&here);
    arm((uintptr_t)dlsym(RTLD_DEFAULT, "io_uring_submit"));
    atomic_store(&armed, 1);
    int c = accept(listener, NULL, NULL);
    bool in_child = getpid() != parent;
    if (c < 0) {
        perror("accept");
        _exit(in_child ? 3 : 4);
    }
    if (!in_child)
        atomic_store(&accepted, 1);
    char b = 0;
    CHECK_EQ(read(c, &b, 1), 1);
    if (in_child)
        _exit(b == '1' || b == '2' ? CHILD_GOT + b - '0' : 5);
    parent_got = b;
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(breakpoint), 0);
    return NULL;
}

int main(void)
{
    parent = getpid();
    listener = raw_tcp_listener(16, &port);
    if (!kernel_accepts_without_waiting(listener))
        SKIP("no io_uring accept that does not wait on this kernel");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    CHECK_EQ(sigaction(SIGTRAP, &sa, NULL), 0);

    cap_thread_t t = spawn(acceptor, NULL);
    while (atomic_load(&armed) == 0)
        cap_usleep(1000);
    cap_usleep(2000); /* it parks: nothing queued */
    int first = raw_tcp_connect(port, NULL);
    CHECK_EQ(syscall(SYS_write, first, "1", 1), 1);
    /* The handler forks when the acceptor's call submits; a call that
     * returned without that is a failure, not a wait. */
    while (atomic_load(&child) == 0 && atomic_load(&accepted) == 0)
        cap_usleep(1000);
    CHECK_EQ(atomic_load(&bad_code), 0);
    pid_t pid = atomic_load(&child);
    CHECK(pid > 0);
    int second = raw_tcp_connect(port, NULL);
    CHECK_EQ(syscall(SYS_write, second, "2", 1), 1);
    join(t);
    int child_got = child_exit_status(pid) - CHILD_GOT;
    CHECK((parent_got == '1' && child_got == 2) || (parent_got == '2' && child_got == 1));
    CHECK_EQ(close(first), 0);
    CHECK_EQ(close(second), 0);
    CHECK_EQ(close(listener), 0);
    return 0;
}

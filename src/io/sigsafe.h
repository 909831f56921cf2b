/* SPDX-License-Identifier: MIT */
/*
 * The runtime's part of an async-signal-safe call, and handler jumps.
 *
 * POSIX lets a signal handler leave by siglongjmp when the code it
 * interrupted was an async-signal-safe function (read, write, waitpid,
 * poll, close, sem_post, ...; signal-safety(7)). Under Linux such a
 * function is a system call, and the kernel holds nothing of the
 * program's when the handler runs. Here the same function is runtime
 * code: it takes the runtime's locks (a descriptor's, the offload pool's,
 * the signal registry's) and links records on the thread's stack, and a
 * jump out of its middle would leave them taken and linked (a CI run
 * once deadlocked so: a timer's handler jumped out of waitpid while it
 * held the offload pool's lock, and the next waitpid waited on it).
 *
 * So each such function opens a scope for its whole body:
 *
 *     cap__sigsafe in CAP__SIGSAFE = cap__sigsafe_enter();
 *
 * which counts the calling user thread inside (cap__thread.in_sigsafe).
 * A handler that interrupted the thread while the count is not 0 and
 * jumps into the thread's own frames does not jump there and then: the
 * jump is handed to the thread (src/stack/signal.c, the same record a
 * jump into a parked thread uses) and the handler returns into the
 * runtime code it interrupted. The delivery interrupts the thread's call
 * whatever SA_RESTART says, so a call that would wait ends with EINTR at
 * once, and the jump is made as the call returns: at its cap__ic_ret, or
 * at the latest as the scope closes (the cleanup attribute closes it on
 * every return path). A fault (a kernel SIGSEGV, SIGBUS, ...) is not
 * handed over: its handler's return would run the faulting instruction
 * again; its jump is made at once, as before.
 *
 * The count is the thread's own: written only by the thread, read by a
 * handler on the same kernel thread that interrupted it (signal fences
 * order the two). A jump made by the thread leaves every scope it was in
 * (the target is a frame of the program's, outside them), so the jump
 * puts the count back to 0 (cap__sig_take_jump_slow), and so does a jump
 * a handler makes at once into the thread (a fault's: src/stack/signal.c).
 * A thread that ends inside a scope (a cancellation acted on in the call)
 * is out of it, and a jump handed to it is dropped (thread.c, exit). A
 * fork's child makes no jump handed in the parent (handover.c).
 *
 * The functions that open it: POSIX's async-signal-safe ones the library
 * implements, with their Linux variants and the calls they delegate to:
 * read, write, readv, writev, pread, pwrite, preadv, pwritev (and the
 * v2 ones), recv, recvfrom, recvmsg, recvmmsg, send, sendto, sendmsg,
 * sendmmsg, socket, socketpair, accept, accept4, connect, shutdown,
 * setsockopt, open, openat (and _FORTIFY_SOURCE's __open_2, __openat_2),
 * creat, pipe, pipe2, dup, dup2, dup3, close, close_range, fcntl, poll,
 * ppoll, select, pselect, epoll_ctl, epoll_wait, epoll_pwait,
 * epoll_pwait2, wait, waitpid, wait4, waitid, sleep, usleep, nanosleep,
 * clock_nanosleep, pause, sigsuspend, sigprocmask, pthread_sigmask,
 * raise, sigpending, pthread_kill (cap_thread_kill), sem_post
 * (cap_sem_post and glibc's), aio_suspend, fsync, fdatasync, tcdrain,
 * fork, _Fork, execve, fexecve, execl, execle. Functions that are not async-
 * signal-safe (stdio, malloc, the mutexes) do not open it: POSIX leaves a
 * jump out of them undefined, and it is made at once.
 */
#ifndef CAP_IO_SIGSAFE_H
#define CAP_IO_SIGSAFE_H

#include <stdatomic.h>

#include "sched/worker.h"
#include "thread/thread.h"
#include "util/sigctx.h"

typedef struct cap__sigsafe {
    cap__thread *self; /* the user thread counted inside, or NULL */
} cap__sigsafe;

static inline cap__sigsafe cap__sigsafe_enter(void)
{
    cap__thread *self = cap__current();
    if (self == NULL || cap__in_signal_handler())
        return (cap__sigsafe){ NULL };
    self->in_sigsafe++;
    atomic_signal_fence(memory_order_seq_cst); /* counted before the body runs */
    return (cap__sigsafe){ self };
}

/* The body is over: out of the count, then the jump a handler handed the
 * thread meanwhile, if the call did not make it already. A handler that
 * comes between the two finds the count 0, jumps at once, and drops the
 * handed jump (src/stack/signal.c). */
static inline void cap__sigsafe_leave(cap__sigsafe *in)
{
    if (in->self == NULL)
        return;
    atomic_signal_fence(memory_order_seq_cst);
    if (in->self->in_sigsafe != 0) /* 0 after a jump made at once from a
                                      scope of a program function inside
                                      (a fork handler's): not below */
        in->self->in_sigsafe--;
    atomic_signal_fence(memory_order_seq_cst);
    cap__sig_take_jump();
}

#define CAP__SIGSAFE __attribute__((cleanup(cap__sigsafe_leave), unused))

#endif /* CAP_IO_SIGSAFE_H */

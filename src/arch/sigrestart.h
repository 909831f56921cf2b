/* SPDX-License-Identifier: MIT */
/*
 * Turning a restarted system call into EINTR, from a signal handler.
 *
 * The runtime's kick signal (io/sigintr.h) is installed with SA_RESTART,
 * so a kick that lands on a worker blocked in a system call the runtime
 * does not see (stdio input, a raw syscall()) lets that call go on, as if
 * nothing happened. Where an interruption is the point (an offload pool
 * thread's call, or the program's own SIGURG handler installed without
 * SA_RESTART), the handler makes the call fail with EINTR itself: with
 * SA_RESTART the kernel hands the handler a context rewound to re-issue
 * the call, which this turns into the call's return with -EINTR, the
 * context the kernel would have made without SA_RESTART.
 *
 * One implementation per architecture: src/arch/<cpu>/sigrestart.c.
 */
#ifndef CAP_ARCH_SIGRESTART_H
#define CAP_ARCH_SIGRESTART_H

#include <stdbool.h>

/* uctx: a handler's ucontext. If the interrupted code is about to issue a
 * system call (rewound by the kernel to restart it, or caught just before
 * its first try), makes the call return -EINTR without issuing it, and
 * says true. The calls the kernel always restarts (fork, vfork, clone,
 * clone3) are left alone. */
bool cap__arch_syscall_to_eintr(void *uctx);

#endif /* CAP_ARCH_SIGRESTART_H */

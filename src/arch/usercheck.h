/* SPDX-License-Identifier: MIT */
/*
 * Checking the application's pointers before the wrappers read them.
 *
 * A wrapper that reads or writes a structure the application handed in
 * (an iovec array, a msghdr, a pollfd array, an fd_set, a timespec, a
 * signal mask) before the kernel sees it would take a SIGSEGV where libc
 * returns EFAULT, because in libc only the kernel touches that memory.
 * These checks touch one byte per page of the range (a locked or-with-0
 * for writes, which leaves the contents alone) in a function whose
 * faulting instructions are known: the fault handlers (stack/overflow.c,
 * and stack/signal.c's trampoline when the program installed its own
 * SIGSEGV or SIGBUS handler) call cap__usercheck_fixup first, which, for
 * a fault at one of those instructions, makes the check return false
 * instead of letting the signal through.
 *
 * Pages are assumed to be at least 4 KiB. A range that wraps around the
 * address space is not accessible. The answer is as of the check: memory
 * another thread unmaps afterwards is the program's own race, as with
 * libc (where the kernel would then return EFAULT, here we may fault).
 *
 * One implementation per architecture: src/arch/<cpu>/usercheck.S.
 */
#ifndef CAP_ARCH_USERCHECK_H
#define CAP_ARCH_USERCHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Whether every byte of [p, p + n) can be read (n == 0: true). */
bool cap__user_readable(const void *p, size_t n);

/* Whether every byte of [p, p + n) can be read and written. */
bool cap__user_writable(void *p, size_t n);

/* From a SIGSEGV or SIGBUS handler with its ucontext: if the fault is one
 * of the checks' own, redirects it to return false and says true (the
 * handler must then just return); otherwise false, and nothing changed. */
bool cap__usercheck_fixup(void *uctx);

#endif

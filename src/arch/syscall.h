/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls for the hot transfer paths: cap__sys6 returns what the
 * kernel returned (>= 0, or -errno) without going through libc's
 * syscall(), which costs a call, moves every argument one register over
 * and converts an error into errno that the caller then converts back.
 * The I/O layer's convention is -errno already (src/io/io.h).
 *
 * Plain system calls only: no cancellation, no errno. One implementation
 * per architecture in its own file (arch/<arch>/syscall.h), picked by the
 * #if chain; elsewhere libc's syscall().
 */
#ifndef CAP_ARCH_SYSCALL_H
#define CAP_ARCH_SYSCALL_H

#include <errno.h>
#include <unistd.h>

#if defined(__x86_64__)
#include "arch/x86_64/syscall.h"
#else
static inline long cap__sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(nr, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#endif

#endif /* CAP_ARCH_SYSCALL_H */

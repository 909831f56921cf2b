/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls for the hot transfer paths: cap__sys6 returns what the
 * kernel returned (>= 0, or -errno) without going through libc's
 * syscall(), which costs a call, moves every argument one register over
 * and converts an error into errno that the caller then converts back.
 * The I/O layer's convention is -errno already (src/io/io.h).
 *
 * Plain system calls only: no cancellation, no errno. One implementation
 * per architecture, picked by the #if chain; elsewhere libc's syscall().
 */
#ifndef CAP_ARCH_SYSCALL_H
#define CAP_ARCH_SYSCALL_H

#include <errno.h>
#include <unistd.h>

#if defined(__x86_64__)
static inline long cap__sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}
#else
static inline long cap__sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(nr, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#endif

#endif /* CAP_ARCH_SYSCALL_H */

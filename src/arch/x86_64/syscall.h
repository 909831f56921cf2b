/* SPDX-License-Identifier: MIT */
/*
 * x86_64 body of cap__sys6 (src/arch/syscall.h): the syscall instruction
 * with the kernel's argument registers; rcx and r11 are clobbered by the
 * instruction itself. Returns what the kernel returned (>= 0 or -errno).
 */
#ifndef CAP_ARCH_X86_64_SYSCALL_H
#define CAP_ARCH_X86_64_SYSCALL_H

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

#endif /* CAP_ARCH_X86_64_SYSCALL_H */

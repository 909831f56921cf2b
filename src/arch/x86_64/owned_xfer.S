/* SPDX-License-Identifier: MIT */
/*
 * x86_64 owned transfer (src/arch/ownedxfer.h). rdi, rsi, rdx are the
 * call's arguments already; the flags' address moves to r10 (the
 * kernel keeps r8-r10 across a system call, and clobbers rcx and r11),
 * the bit is in r8d, the call's number in r9. A context interrupted in
 * [cap__owned_xfer_test, cap__owned_xfer_syscall] resumes at the test
 * (owned_xfer.c).
 */
	.text

	.globl	cap__arch_owned_xfer
	.hidden	cap__arch_owned_xfer
	.type	cap__arch_owned_xfer, @function
cap__arch_owned_xfer:
	movq	%rcx, %r10
	.globl	cap__owned_xfer_test
	.hidden	cap__owned_xfer_test
cap__owned_xfer_test:
	testl	%r8d, (%r10)
	jz	.Lnot_owned
	movq	%r9, %rax
	.globl	cap__owned_xfer_syscall
	.hidden	cap__owned_xfer_syscall
cap__owned_xfer_syscall:
	syscall
	ret
.Lnot_owned:
	movq	$-4096, %rax
	ret
	.size	cap__arch_owned_xfer, .-cap__arch_owned_xfer

	.section .note.GNU-stack,"",@progbits

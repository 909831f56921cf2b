/* SPDX-License-Identifier: MIT */
/*
 * x86_64 owned transfer (src/arch/ownedxfer.h). rdi, rsi, rdx are the
 * call's first three arguments already; the fourth moves from rcx to
 * r10, as the kernel takes it. Everything the test and the call need
 * stays in registers the kernel keeps across a system call (it clobbers
 * rax, rcx and r11, and rewinds rax to the number for a restart): the
 * flags' address in r8, the bit in r9d, the call's number in rbx, saved
 * on the stack first. A context interrupted in
 * [cap__owned_xfer_test, cap__owned_xfer_syscall] resumes at the test
 * (owned_xfer.c).
 */
	.text

	.globl	cap__arch_owned_xfer
	.hidden	cap__arch_owned_xfer
	.type	cap__arch_owned_xfer, @function
cap__arch_owned_xfer:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	movq	16(%rsp), %rbx
	movq	%rcx, %r10
	.globl	cap__owned_xfer_test
	.hidden	cap__owned_xfer_test
cap__owned_xfer_test:
	testl	%r9d, (%r8)
	jz	.Lnot_owned
	movq	%rbx, %rax
	.globl	cap__owned_xfer_syscall
	.hidden	cap__owned_xfer_syscall
cap__owned_xfer_syscall:
	syscall
	popq	%rbx
	.cfi_remember_state
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_restore_state
.Lnot_owned:
	movq	$-4096, %rax
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	cap__arch_owned_xfer, .-cap__arch_owned_xfer

	.section .note.GNU-stack,"",@progbits

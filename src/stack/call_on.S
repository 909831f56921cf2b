/* SPDX-License-Identifier: MIT */
/*
 * cap__linked_call_on(top, fn): calls fn() on another stack (linked.h).
 *
 * Used to make a signal handler's jump that was held back while the
 * link code changed a list (linked.c, busy_end): that code may run in
 * the last KiB of a chunk (the reserve below the limit), too little for
 * the jump's own calls, so the jump is made from the top of the kernel
 * thread's alternate signal stack, which no handler uses then. fn does
 * not return when it jumps; if it does return, the stack pointer and
 * the vector argument registers are put back: the link and unlink code
 * never touches xmm0-7, which hold the arguments of the function being
 * linked, or the results of the one being unlinked (morestack.S).
 */
	.text
	.globl	cap__linked_call_on
	.hidden	cap__linked_call_on
	.type	cap__linked_call_on, @function
	.p2align 4
cap__linked_call_on:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq	$-16, %rdi
	leaq	-128(%rdi), %rsp
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	call	*%rsi
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	cap__linked_call_on, .-cap__linked_call_on

	.section .note.GNU-stack,"",@progbits

/* SPDX-License-Identifier: MIT */
/*
 * x86_64 System V context switch. The frame layout is documented in
 * src/arch/context.h and read by tools/gdb/capriccio.py.
 */
	.text

/* void cap__ctx_switch(void **save_sp (rdi), void *load_sp (rsi)) */
	.globl	cap__ctx_switch
	.hidden	cap__ctx_switch
	.type	cap__ctx_switch, @function
	.p2align 4
cap__ctx_switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	cap__ctx_switch, .-cap__ctx_switch

/*
 * First code a new context runs: cap__ctx_make stored entry in r12 and its
 * argument in r13. The stack pointer is 16-byte aligned here, as the ABI
 * requires before a call. entry never returns; ud2 traps if it does.
 */
	.globl	cap__ctx_trampoline
	.hidden	cap__ctx_trampoline
	.type	cap__ctx_trampoline, @function
	.p2align 4
cap__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r13, %rdi
	callq	*%r12
	ud2
	.cfi_endproc
	.size	cap__ctx_trampoline, .-cap__ctx_trampoline

	.section .note.GNU-stack,"",@progbits

/* SPDX-License-Identifier: MIT */
/*
 * x86_64 System V context switch. The frame layout is documented in
 * src/arch/context.h and read by tools/gdb/capriccio.py.
 */
	.text

/*
 * The three pieces every switch is made of, shared by the functions
 * below. PUSH_CONTEXT saves the callee-saved registers and the FP control
 * words (one 8-byte slot, padding zeroed) on the running stack, stores the
 * stack pointer in *rdi, and leaves the words just saved in eax and edx.
 * POP_CONTEXT, with rsp at the context to resume, reloads the FP words
 * only when they differ from eax/edx (ldmxcsr and fldcw are slow,
 * microcoded, and nearly every thread runs with the same words), jumping
 * to FP_RELOAD's out-of-line label 2 for that, and pops the registers.
 * The two words are compared separately, each at the width it was
 * stored: one 8-byte load over the 4- and 2-byte stores cannot be
 * forwarded from the store buffer and stalled every switch (about 2.5 ns
 * on the EPYC this was measured on). rax and rdx are scratch here.
 */
	.macro	PUSH_REGS
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	.endm

	.macro	PUSH_CONTEXT
	PUSH_REGS
	pushq	$0
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movl	(%rsp), %eax
	movzwl	4(%rsp), %edx
	.endm

	.macro	POP_CONTEXT
	cmpl	(%rsp), %eax
	jne	2f
	cmpw	4(%rsp), %dx
	jne	2f
1:
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	.endm

	.macro	FP_RELOAD
2:
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	jmp	1b
	.endm

/* void cap__ctx_switch(void **save_sp (rdi), void *load_sp (rsi)) */
	.globl	cap__ctx_switch
	.hidden	cap__ctx_switch
	.type	cap__ctx_switch, @function
	.p2align 4
cap__ctx_switch:
	.cfi_startproc
	PUSH_CONTEXT
	movq	%rsi, %rsp
	POP_CONTEXT
	ret
	FP_RELOAD
	.cfi_endproc
	.size	cap__ctx_switch, .-cap__ctx_switch

/*
 * void cap__ctx_start(void **save_sp (rdi), void *load_sp (rsi)): as
 * cap__ctx_switch, for a load_sp made by cap__ctx_make that has never run.
 * It ends with a jump to the frame's return address (the trampoline)
 * instead of a `ret`, so the return-address predictor keeps the entry the
 * call to this function pushed: the new context's last act, the `ret` of
 * cap__ctx_load to the context saved here, then finds it on top and is
 * predicted, and so are the saved context's own returns after it. (A
 * `ret` here would pop it, and every return of the resumed context would
 * then be predicted from the new context's abandoned calls: five
 * mispredicted returns per create+join.)
 */
	.globl	cap__ctx_start
	.hidden	cap__ctx_start
	.type	cap__ctx_start, @function
	.p2align 4
cap__ctx_start:
	.cfi_startproc
	PUSH_CONTEXT
	movq	%rsi, %rsp
	POP_CONTEXT
	popq	%rcx		/* the trampoline */
	jmp	*%rcx
	FP_RELOAD
	.cfi_endproc
	.size	cap__ctx_start, .-cap__ctx_start

/*
 * void cap__ctx_load(void *load_sp (rdi)): resumes the context at load_sp
 * and abandons the running one without saving it (an exiting thread's
 * last switch). The FP control words are compared with the running ones,
 * read into the red zone, as cap__ctx_switch does.
 */
	.globl	cap__ctx_load
	.hidden	cap__ctx_load
	.type	cap__ctx_load, @function
	.p2align 4
cap__ctx_load:
	.cfi_startproc
	stmxcsr	-8(%rsp)	/* the running words, in the red zone */
	fnstcw	-4(%rsp)
	movl	-8(%rsp), %eax
	movzwl	-4(%rsp), %edx
	movq	%rdi, %rsp
	POP_CONTEXT
	ret
	FP_RELOAD
	.cfi_endproc
	.size	cap__ctx_load, .-cap__ctx_load

/*
 * First code a new context runs: cap__ctx_make stored entry in r12 and its
 * argument in r13. The stack pointer is 16-byte aligned here, as the ABI
 * requires before a call. entry either never returns or returns the saved
 * stack pointer of the context to resume in place of this one (a thread
 * that exits): a balanced call and return, so the final `ret` of
 * cap__ctx_load meets the return-address predictor as it was when this
 * context was started (see cap__ctx_start).
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
	movq	%rax, %rdi
	jmp	cap__ctx_load
	.cfi_endproc
	.size	cap__ctx_trampoline, .-cap__ctx_trampoline

/*
 * (Last in the file, so the functions above keep the addresses they had
 * before it was added.)
 *
 * void cap__ctx_switch_mx(void **save_sp (rdi), void *load_sp (rsi),
 * const uint32_t *mxcsr (rdx)): cap__ctx_switch with the running
 * context's MXCSR stored at *mxcsr ahead of the call by the caller
 * (cap__ctx_read_mxcsr), and the same frame. A `stmxcsr` takes ~2.5 ns,
 * and loading its result at once, as PUSH_CONTEXT must, stalls for
 * another ~1.5 ns (the load waits for the microcoded store); stored a few
 * dozen instructions earlier and loaded only here, both costs overlap the
 * caller's work. (A pointer rather than the value: given the value, the
 * compiler loads it right after the `stmxcsr`.) Exact as long as nothing
 * between the read and the switch changes MXCSR: the caller runs only
 * runtime code there.
 */
	.globl	cap__ctx_switch_mx
	.hidden	cap__ctx_switch_mx
	.type	cap__ctx_switch_mx, @function
	.p2align 4
cap__ctx_switch_mx:
	.cfi_startproc
	PUSH_REGS
	movl	(%rdx), %eax	/* zero-extended: the padding stays zero */
	pushq	%rax
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movzwl	4(%rsp), %edx
	movq	%rsi, %rsp
	POP_CONTEXT
	ret
	FP_RELOAD
	.cfi_endproc
	.size	cap__ctx_switch_mx, .-cap__ctx_switch_mx

	.section .note.GNU-stack,"",@progbits

/* SPDX-License-Identifier: MIT */
/*
 * x86_64 entries of dlopen, dlmopen and dlclose (intercept/dl.c says
 * why). glibc takes the caller from its own return address (the
 * namespace, RUNPATH and $ORIGIN of the object that called), so the
 * real function must be entered with the caller's return address in
 * place: each entry calls cap__dl_enter(slot, which) with the call's
 * arguments saved, and then jumps to the function it returns, leaving
 * the stack as the caller made it. The return slot is the stack pointer
 * at entry.
 *
 * cap__dl_return is where such a call returns once cap__dl_enter's
 * switch hook put it in the slot (its thread switched away inside the
 * call): rax (and rdx) hold the result; cap__dl_returned gives back the
 * caller's return address, which it jumps to.
 */
	.text

	.globl	dlopen
	.type	dlopen, @function
dlopen:
	movl	$0, %eax
	jmp	.Lenter
	.size	dlopen, .-dlopen

	.globl	dlmopen
	.type	dlmopen, @function
dlmopen:
	movl	$1, %eax
	jmp	.Lenter
	.size	dlmopen, .-dlmopen

	.globl	dlclose
	.type	dlclose, @function
dlclose:
	movl	$2, %eax
	jmp	.Lenter
	.size	dlclose, .-dlclose

/* Entry rsp is 8 mod 16; three pushes align it for the call. */
.Lenter:
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	leaq	24(%rsp), %rdi		/* the return slot */
	movl	%eax, %esi
	call	cap__dl_enter
	popq	%rdx
	popq	%rsi
	popq	%rdi
	jmp	*%rax

/* Entered by the real function's ret: rsp is the slot + 8 (0 mod 16). */
	.globl	cap__dl_return
	.hidden	cap__dl_return
	.type	cap__dl_return, @function
cap__dl_return:
	pushq	%rax
	pushq	%rdx
	call	cap__dl_returned
	movq	%rax, %r11
	popq	%rdx
	popq	%rax
	jmp	*%r11
	.size	cap__dl_return, .-cap__dl_return

	.section .note.GNU-stack,"",@progbits

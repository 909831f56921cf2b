/* SPDX-License-Identifier: MIT */
/*
 * x86_64 pointer checks (src/arch/usercheck.h). Both functions are
 * leaves that push nothing, so a fault anywhere between
 * cap__usercheck_begin and cap__usercheck_end is resumed at
 * cap__usercheck_fail (usercheck_fixup.c), whose ret returns false to
 * the caller. rdi = p, rsi = n; the touched address runs in rax, the last
 * byte of the range is in rdx.
 */
	.text

	.globl	cap__user_readable
	.hidden	cap__user_readable
	.type	cap__user_readable, @function
cap__user_readable:
	testq	%rsi, %rsi
	jz	.Lyes
	leaq	-1(%rdi,%rsi), %rdx
	cmpq	%rdi, %rdx
	jb	.Lno			/* wraps around */
	movq	%rdi, %rax
	.globl	cap__usercheck_begin
	.hidden	cap__usercheck_begin
cap__usercheck_begin:
.Lread_page:
	movb	(%rax), %cl		/* may fault */
	andq	$-4096, %rax
	addq	$4096, %rax		/* the next page's first byte */
	jc	.Lyes			/* past the top of the address space */
	cmpq	%rdx, %rax
	jbe	.Lread_page
	jmp	.Lyes
	.size	cap__user_readable, .-cap__user_readable

	.globl	cap__user_writable
	.hidden	cap__user_writable
	.type	cap__user_writable, @function
cap__user_writable:
	testq	%rsi, %rsi
	jz	.Lyes
	leaq	-1(%rdi,%rsi), %rdx
	cmpq	%rdi, %rdx
	jb	.Lno
	movq	%rdi, %rax
.Lwrite_page:
	lock orb $0, (%rax)		/* may fault; the byte is unchanged */
	andq	$-4096, %rax
	addq	$4096, %rax
	jc	.Lyes
	cmpq	%rdx, %rax
	jbe	.Lwrite_page
	.globl	cap__usercheck_end
	.hidden	cap__usercheck_end
cap__usercheck_end:
.Lyes:
	movl	$1, %eax
	ret
	.size	cap__user_writable, .-cap__user_writable

	.globl	cap__usercheck_fail
	.hidden	cap__usercheck_fail
	.type	cap__usercheck_fail, @function
cap__usercheck_fail:
.Lno:
	xorl	%eax, %eax
	ret
	.size	cap__usercheck_fail, .-cap__usercheck_fail

	.section .note.GNU-stack,"",@progbits

/* SPDX-License-Identifier: MIT */
/*
 * __stack_chk_fail for programs on linked stacks (libcapriccio-linked.a).
 *
 * With -fstack-protector (-strong is in Debian's and Ubuntu's default
 * build flags) every function with a canary calls __stack_chk_fail when
 * the canary is smashed. glibc's lives in libc.so, which is not
 * split-stack code, so lld gave every such function the prologue of a
 * caller of non-split code: room for CAP_LINKED_EXTERNAL (16 KiB) more,
 * a 16 KiB chunk linked wherever less is left. A thread then never stays
 * on its 2 KiB first chunk, and a recursion that checks its room (as
 * tests/stacklinked/progs/hot_split_loop.c does) never finds it short.
 * Defined here, in an object marked as split-stack code, the calls bind
 * to this one and the prologues stay as the compiler made them.
 *
 * It does what glibc's does, with system calls only (no call, so no
 * prologue, and nothing that needs room on a stack that may be the
 * smashed one): the same message on stderr, then the process ends by
 * SIGABRT, its default action restored and the signal unblocked first
 * (glibc's abort does the same in the end), exit status 127 should even
 * that return.
 */
	.text
	.globl	__stack_chk_fail
	.type	__stack_chk_fail, @function
	.p2align 4
__stack_chk_fail:
	.cfi_startproc
	andq	$-16, %rsp
	movl	$1, %eax		/* write(2, msg, len) */
	movl	$2, %edi
	leaq	stack_chk_msg(%rip), %rsi
	movl	$stack_chk_len, %edx
	syscall
	subq	$32, %rsp		/* a kernel sigaction: SIG_DFL, no flags */
	movq	$0, (%rsp)
	movq	$0, 8(%rsp)
	movq	$0, 16(%rsp)
	movq	$0, 24(%rsp)
	movl	$13, %eax		/* rt_sigaction(SIGABRT, &act, NULL, 8) */
	movl	$6, %edi
	movq	%rsp, %rsi
	xorl	%edx, %edx
	movl	$8, %r10d
	syscall
	movq	$32, (%rsp)		/* { SIGABRT }: bit 6 - 1 */
	movl	$14, %eax		/* rt_sigprocmask(SIG_UNBLOCK, &set, NULL, 8) */
	movl	$1, %edi
	movq	%rsp, %rsi
	xorl	%edx, %edx
	movl	$8, %r10d
	syscall
	movl	$39, %eax		/* getpid() */
	syscall
	movl	%eax, %r8d
	movl	$186, %eax		/* gettid() */
	syscall
	movl	%eax, %esi		/* tgkill(pid, tid, SIGABRT) */
	movl	%r8d, %edi
	movl	$6, %edx
	movl	$234, %eax
	syscall
	movl	$127, %edi		/* exit_group(127) */
	movl	$231, %eax
	syscall
	hlt
	.cfi_endproc
	.size	__stack_chk_fail, .-__stack_chk_fail

	.section .rodata
stack_chk_msg:
	.ascii	"*** stack smashing detected ***: terminated\n"
	.set	stack_chk_len, . - stack_chk_msg

	.section .note.GNU-stack, "", @progbits
	/* Split-stack code as far as lld can tell: its callers keep their
	 * own prologues. */
	.section .note.GNU-split-stack, "", @progbits

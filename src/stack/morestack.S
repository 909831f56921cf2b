/* SPDX-License-Identifier: MIT */
/*
 * __morestack and __morestack_non_split for x86_64: the entry points that
 * code compiled with -fsplit-stack calls when its frame does not fit above
 * the stack limit %fs:0x70 (protocol and invariants in linked.h).
 *
 * On entry (from the slow path of a function F's prologue):
 *   [rsp]      R: return address into F's prologue, pointing at a `ret`;
 *              F's body continues at R + 1
 *   [rsp+8]    F's return address
 *   [rsp+16..] F's stack arguments, r11 bytes of them
 *   r10 = F's frame size (0 for frames under 256 bytes), r11 = argument
 *   bytes; F's arguments in rdi, rsi, rdx, rcx, r8, r9, rax (al: vector
 *   registers used by a varargs call) and xmm0-7.
 *
 * Our frame, on the old stack (rbp = entry rsp - 8, which F's varargs code
 * relies on: it finds its stack arguments at rbp + 24):
 *   rbp+8     R
 *   rbp+0     saved rbp
 *   rbp-48    struct cap__link (linked.h): prev, chunk, old_limit, slot,
 *             dynamic (40 bytes)
 *   rbp-104   rdi, rsi, rdx, rcx, r8, r9, rax (8 bytes each), 8 spare
 * The vector argument registers are not saved: cap__linked_link and
 * cap__linked_unlink never touch them (NO_VECTOR in linked.c).
 *
 * Then: cap__linked_link picks a chunk, copies the stack arguments to its
 * top, records the link and sets the new limit; we switch to it, restore
 * F's arguments and call F's body at R + 1. When the body returns, we are
 * back on our frame by rbp, keep the return registers (rax, rdx; xmm0,
 * xmm1 and x87 are never touched), cap__linked_unlink gives the chunk back and
 * restores the old limit, and `ret` goes to R, whose `ret` leaves F.
 *
 * Unwinding: our CFI says that we were called by F's *caller*: the return
 * address is F's (at entry rsp + 8, later rbp + 16) and the CFA is
 * rbp + 24, the stack pointer F's caller will have after F returns. So an
 * unwinder walks from F's body on the new chunk, through __morestack, to
 * F's caller on the old stack, and never sees F's prologue (whose `call`
 * to us is outside F's exception call-site table: a C++ unwinder stopping
 * there would call std::terminate). gdb accepts the jump between stacks
 * for a frame named __morestack.
 *
 * An exception (C++, or _Unwind_ForcedUnwind) that leaves the body passes
 * through this frame: the call of the body is covered by a cleanup in our
 * LSDA (personality __gcc_personality_v0), whose landing pad unlinks the
 * chunk and restores the limit exactly as a return would, then resumes
 * the unwinding with _Unwind_Resume. (longjmp is handled in longjmp.c.)
 *
 * Built twice: into libcapriccio.so, and (with CAP_MORESTACK_IN_EXE) into
 * libcapriccio-linked.a, which programs built for linked stacks link
 * statically: lld can only redirect a call to __morestack_non_split
 * defined in the executable itself, and a direct call also skips the PLT
 * (whose lazy binding would run the dynamic linker in the reserve). The
 * executable's copy reaches the library's C side through the GOT, by the
 * exported (not public) names cap_linked_morestack_link/_unlink and
 * cap_linked_external_bytes.
 *
 * __morestack_non_split is what lld makes F call when F calls code built
 * without -fsplit-stack (libc, libcapriccio): if the current chunk still
 * has F's frame plus CAP_LINKED_EXTERNAL bytes, F's body runs where it is;
 * otherwise it links a chunk big enough for both, flagging the link as a
 * non-split one (bit 62 of r10) for the counters.
 */
	.text

/* rsp is 16-aligned at F's call to us, so 8 mod 16 after `push %rbp`:
 * SAVE = 8 mod 16 keeps the save area and our calls aligned. */
#define SAVE 104
#define LINK 56

#ifdef CAP_MORESTACK_IN_EXE
#define CALL_LINK	call *cap_linked_morestack_link@GOTPCREL(%rip)
#define CALL_UNLINK	call *cap_linked_morestack_unlink@GOTPCREL(%rip)
#define LOAD_EXTERNAL(reg) movq cap_linked_external_bytes@GOTPCREL(%rip), reg; movq (reg), reg
#else
#define CALL_LINK	call cap__linked_link
#define CALL_UNLINK	call cap__linked_unlink
#define LOAD_EXTERNAL(reg) movq cap__linked_external_bytes(%rip), reg
	.hidden	cap__linked_link
	.hidden	cap__linked_unlink
	.hidden	cap__linked_external_bytes
#endif

	.globl	__morestack
	.type	__morestack, @function
	.p2align 4
__morestack:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.__gcc_personality_v0
	.cfi_lsda 0x1b, .Llsda
	.cfi_def_cfa_offset 16		/* skip R: our caller is F's caller */
.Lmorestack:
	pushq	%rbp
	.cfi_def_cfa_offset 24
	.cfi_offset %rbp, -24
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$SAVE, %rsp
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%rax, 48(%rsp)

	/* cap__linked_link(frame, args, entry_sp, site, nonsplit, link) */
	movq	%r10, %rdi
	btrq	$62, %rdi
	setc	%r8b
	movzbl	%r8b, %r8d
	movq	%r11, %rsi
	leaq	16(%rbp), %rdx
	movq	8(%rbp), %rcx
	leaq	LINK(%rsp), %r9
	CALL_LINK

	movq	%rax, %rsp		/* onto the new chunk, at the copied arguments */
	movq	-SAVE+0(%rbp), %rdi
	movq	-SAVE+8(%rbp), %rsi
	movq	-SAVE+16(%rbp), %rdx
	movq	-SAVE+24(%rbp), %rcx
	movq	-SAVE+32(%rbp), %r8
	movq	-SAVE+40(%rbp), %r9
	movq	-SAVE+48(%rbp), %rax
	movq	8(%rbp), %r10
	addq	$1, %r10		/* past the `ret` that follows F's call to us */
.Lbody_call:
	call	*%r10
.Lbody_return:

	leaq	-SAVE(%rbp), %rsp	/* back on the old stack */
	movq	%rax, 0(%rsp)
	movq	%rdx, 8(%rsp)
	leaq	LINK(%rsp), %rdi
	CALL_UNLINK
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdx
	leave
	.cfi_def_cfa %rsp, 16
	ret

	/* Landing pad: an exception is leaving the body (rax: the exception). */
	.cfi_def_cfa %rbp, 24
.Lunwinding:
	leaq	-SAVE(%rbp), %rsp
	movq	%rax, 0(%rsp)
	leaq	LINK(%rsp), %rdi
	CALL_UNLINK
	movq	0(%rsp), %rdi
	call	_Unwind_Resume@PLT
	ud2
	.cfi_endproc
	.size	__morestack, .-__morestack

	/* The LSDA: one call-site entry, the body call, with a cleanup. */
	.section .gcc_except_table, "a", @progbits
	.p2align 2
.Llsda:
	.byte	0xff			/* landing pads relative to the function */
	.byte	0xff			/* no type table */
	.byte	0x01			/* call-site entries in uleb128 */
	.uleb128 .Lcs_end - .Lcs_begin
.Lcs_begin:
	.uleb128 .Lbody_call - __morestack
	.uleb128 .Lbody_return - .Lbody_call
	.uleb128 .Lunwinding - __morestack
	.uleb128 0			/* action 0: a cleanup */
.Lcs_end:

	.hidden	DW.ref.__gcc_personality_v0
	.weak	DW.ref.__gcc_personality_v0
	.section .data.rel.local.DW.ref.__gcc_personality_v0, "awG", @progbits, DW.ref.__gcc_personality_v0, comdat
	.p2align 3
	.type	DW.ref.__gcc_personality_v0, @object
	.size	DW.ref.__gcc_personality_v0, 8
DW.ref.__gcc_personality_v0:
	.quad	__gcc_personality_v0

	.text

	.globl	__morestack_non_split
	.type	__morestack_non_split, @function
	.p2align 4
__morestack_non_split:
	.cfi_startproc
	.cfi_def_cfa_offset 16		/* as in __morestack: skip R */
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	LOAD_EXTERNAL(%rdx)
	leaq	16(%rsp), %rax		/* rsp at our entry */
	subq	%r10, %rax
	jc	1f
	subq	%rdx, %rax
	jc	1f
	cmpq	%fs:0x70, %rax
	jb	1f
	popq	%rdx			/* room enough: run F's body here */
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	addq	$1, (%rsp)
	ret
1:
	.cfi_adjust_cfa_offset 16
	addq	%rdx, %r10
	btsq	$62, %r10
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	jmp	.Lmorestack
	.cfi_endproc
	.size	__morestack_non_split, .-__morestack_non_split

#ifdef CAP_MORESTACK_IN_EXE
/*
 * __morestack_allocate_stack_space (alloca and VLAs that do not fit the
 * chunk; linked.c) is called by split-stack code near the end of a chunk,
 * and lld does not guard such calls as calls into non-split code: a PLT
 * call's first lazy binding would run the dynamic linker (KiBs of stack)
 * right there. So the executable gets this stub, which jumps through the
 * GOT (bound at load) to the library's C function.
 */
	.text
	.globl	__morestack_allocate_stack_space
	.type	__morestack_allocate_stack_space, @function
	.p2align 4
__morestack_allocate_stack_space:
	.cfi_startproc
	jmp	*cap_linked_allocate_stack_space@GOTPCREL(%rip)
	.cfi_endproc
	.size	__morestack_allocate_stack_space, .-__morestack_allocate_stack_space
#endif

	.section .note.GNU-stack,"",@progbits

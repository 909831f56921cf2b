/* SPDX-License-Identifier: MIT */
/*
 * Split-stack entry points for the runtime's own blocking and sync calls
 * (linked stacks, linked.h; part of libcapriccio-linked.a, so of every
 * program built for linked stacks).
 *
 * Why: lld makes a split-stack function F that calls code built without
 * -fsplit-stack (any shared library, libcapriccio included) ask for
 * CAP_LINKED_EXTERNAL (16 KiB) of room, because it cannot know how much
 * that code needs. A thread that waits on a condition variable from a
 * 2 KiB first chunk would thus link a 16 KiB chunk and hold it for as long
 * as it is parked: an idle thread would cost a page of that chunk on top
 * of its first chunk. But the runtime does know how much its own calls
 * need: CAP__LINKED_RUNTIME_BYTES (runtime_calls.h), checked by
 * tests/stacklinked/progs/runtime_calls_within_bound.c.
 *
 * How: the program is linked with --wrap=NAME for every NAME listed below
 * (cmake/linked.cmake and capriccio-linked.pc read this list), so its
 * calls to NAME reach __wrap_NAME here. This object carries the
 * .note.GNU-split-stack marker, so lld takes those calls for split-stack
 * calls and leaves F's prologue alone. __wrap_NAME is then a split-stack
 * prologue with a frame of CAP__LINKED_RUNTIME_BYTES and no body of its
 * own: if that much room is left above the limit, it jumps to the
 * library's NAME (__real_NAME) on the current chunk; otherwise it calls
 * __morestack, which links a chunk of that size and calls the jump there
 * (at R + 1, the instruction after the `ret` that follows the call).
 *
 * Every listed function takes at most six integer or pointer arguments
 * (none on the stack: r11 = 0) and calls back into the program only for
 * cleanup handlers and key destructors when cancelled, which are
 * split-stack code that checks the limit itself. The text references no
 * function symbol (the targets are read from .data.rel.ro words), so lld
 * has nothing in these stubs to rewrite.
 *
 * Only in libcapriccio-linked.a (CAP_MORESTACK_IN_EXE): the shared
 * library's build of this file is empty.
 */
#include "stack/runtime_calls.h"

	.section .note.GNU-stack, "", @progbits

#ifdef CAP_MORESTACK_IN_EXE
	.section .note.GNU-split-stack, "", @progbits

	.section .data.rel.ro, "aw", @progbits
	.p2align 3
.Lmorestack:
	.quad	__morestack

.macro RUNTIME_CALL name
	.section .data.rel.ro, "aw", @progbits
	.p2align 3
.Lreal_\name:
	.quad	__real_\name

	.text
	.globl	__wrap_\name
	.type	__wrap_\name, @function
	.p2align 4
__wrap_\name:
	.cfi_startproc
	leaq	-CAP__LINKED_RUNTIME_BYTES(%rsp), %r11
	cmpq	%fs:0x70, %r11
	jb	1f
	jmp	*.Lreal_\name(%rip)
1:	movq	$CAP__LINKED_RUNTIME_BYTES, %r10
	xorl	%r11d, %r11d
	call	*.Lmorestack(%rip)
	ret
	jmp	*.Lreal_\name(%rip)	/* R + 1: runs on the new chunk */
	.cfi_endproc
	.size	__wrap_\name, .-__wrap_\name
.endm

/* The list (one name per line, read by cmake/linked.cmake). */
RUNTIME_CALL cap_mutex_lock
RUNTIME_CALL cap_mutex_trylock
RUNTIME_CALL cap_mutex_timedlock
RUNTIME_CALL cap_mutex_clocklock
RUNTIME_CALL cap_mutex_unlock
RUNTIME_CALL cap_cond_wait
RUNTIME_CALL cap_cond_timedwait
RUNTIME_CALL cap_cond_clockwait
RUNTIME_CALL cap_cond_signal
RUNTIME_CALL cap_cond_broadcast
RUNTIME_CALL cap_rwlock_rdlock
RUNTIME_CALL cap_rwlock_wrlock
RUNTIME_CALL cap_rwlock_tryrdlock
RUNTIME_CALL cap_rwlock_trywrlock
RUNTIME_CALL cap_rwlock_timedrdlock
RUNTIME_CALL cap_rwlock_timedwrlock
RUNTIME_CALL cap_rwlock_unlock
RUNTIME_CALL cap_sem_wait
RUNTIME_CALL cap_sem_trywait
RUNTIME_CALL cap_sem_timedwait
RUNTIME_CALL cap_sem_post
RUNTIME_CALL cap_barrier_wait
RUNTIME_CALL cap_sleep_ns
RUNTIME_CALL cap_yield
RUNTIME_CALL cap_thread_join
RUNTIME_CALL cap_thread_self

#endif /* CAP_MORESTACK_IN_EXE */

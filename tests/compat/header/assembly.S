/* SPDX-License-Identifier: MIT */
/*
 * An assembly file built with the program's CFLAGS, as make's default
 * rule for .S and the makefiles of zstd (huf_decompress_amd64.S) and
 * others do: the forced "-include capriccio/pthread.h" reaches the
 * preprocessor of this file too, and must leave it valid assembly.
 */
	.text
	.globl	cap_test_asm_return
cap_test_asm_return:
	ret
	.section .note.GNU-stack,"",@progbits

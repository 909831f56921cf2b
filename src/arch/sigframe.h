/* SPDX-License-Identifier: MIT */
/*
 * Reading the context a signal handler was given: where the interrupted
 * code's stack was. One implementation per architecture:
 * src/arch/<cpu>/sigframe.c.
 */
#ifndef CAP_ARCH_SIGFRAME_H
#define CAP_ARCH_SIGFRAME_H

/* uctx: a handler's ucontext. The stack pointer of the code the signal
 * interrupted. */
const void *cap__arch_interrupted_sp(const void *uctx);

#endif /* CAP_ARCH_SIGFRAME_H */

/* SPDX-License-Identifier: MIT */
/*
 * longjmp across linked chunks. A longjmp out of frames that live on
 * chunks linked by __morestack skips the code in __morestack that would
 * have unlinked them: the chunks would leak and the stack limit would
 * still be that of the innermost chunk. So the library interposes
 * longjmp, _longjmp, siglongjmp and __longjmp_chk (the _FORTIFY_SOURCE
 * one): before jumping, it reads the target stack pointer from the
 * jmp_buf and unlinks every chunk that does not hold it
 * (cap__linked_unwind_to), which also restores the right limit. Then
 * glibc's own function does the jump.
 *
 * The jmp_buf layout is glibc's on x86_64 (rbx, rbp, r12-r15, rsp, pc; rbp,
 * rsp and pc "mangled": xor with the pointer guard at %fs:0x30, then
 * rotated left by 17). A thread with no live links pays one load and a
 * branch. Longjmp from a signal handler is fine: nothing here allocates.
 *
 * The same place sees a jump out of a signal handler (any mode): one
 * made while this kernel thread runs a handler tells the trampoline
 * (cap__sig_handler_jump, util/sigctx.h) before jumping, which ends the
 * handlers the jump leaves (their deliveries, io/sigintr.h; the "in a
 * handler" state of this kernel thread).
 *
 * And a jump that restores a signal mask (sigsetjmp's, saved) gives it
 * to the user thread (io/sigmask.h, cap__sigmask_jump): what sigsetjmp
 * saved is its worker's kernel mask, the target of that moment, which is
 * the thread's own mask when it is the only thread and a part of it
 * otherwise (docs/pthread-compat.md, Signals).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdint.h>

#include "io/sigmask.h"
#include "stack/linked.h"
#include "util/die.h"
#include "util/sigctx.h"

enum { JB_RSP = 6 };

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

static jump_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;

static const void *target_sp(struct __jmp_buf_tag *env)
{
    uintptr_t v = (uintptr_t)env->__jmpbuf[JB_RSP], guard;
    __asm__("movq %%fs:0x30, %0" : "=r"(guard));
    v = (v >> 17) | (v << (64 - 17));
    return (const void *)(v ^ guard);
}

/* Resolved once at start-up (cap__linked_config_load), not lazily:
 * dlsym is not safe in a signal handler, where longjmp often runs. */
void cap__linked_longjmp_init(void)
{
    real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
    real__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
    real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
    real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

static _Noreturn void jump(jump_fn *fn, const char *name, struct __jmp_buf_tag *env, int val)
{
    if (cap__in_signal_handler())
        cap__sig_handler_jump(env, val, target_sp(env)); /* out of the handler, mostly */
    /* The mask sigsetjmp saved becomes the thread's (a user thread's
     * outside handlers: io/sigmask.h); glibc then installs the word as
     * rewritten, the workers' target. */
    if (env->__mask_was_saved && !cap__in_signal_handler())
        cap__sigmask_jump((uint64_t *)(void *)&env->__saved_mask);
    cap__linked_unwind_to(target_sp(env));
    if (*fn == NULL)
        cap__linked_longjmp_init(); /* a longjmp before our constructor ran */
    if (*fn == NULL)
        cap__die("%s: not found in the C library\n", name);
    (*fn)(env, val);
    __builtin_unreachable();
}

void cap__linked_jump_now(struct __jmp_buf_tag *env, int val)
{
    jump(&real_siglongjmp, "siglongjmp", env, val);
}

void longjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(&real_longjmp, "longjmp", env, val);
}

void _longjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(&real__longjmp, "_longjmp", env, val);
}

void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(&real_siglongjmp, "siglongjmp", env, val);
}

/* glibc's check refuses a jump to a stack pointer below the current one
 * unless on the alternate signal stack ("longjmp causes uninitialized
 * stack frame"): across chunks, an older frame may well sit at a lower
 * address. So in a linked program the jump, once its target was found on
 * one of the thread's chunks, is done without that check. */
void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
    if (cap__linked_cfg.enabled)
        jump(&real_longjmp, "longjmp", env, val);
    jump(&real_longjmp_chk, "__longjmp_chk", env, val);
}

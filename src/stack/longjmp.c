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
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/sigmask.h"
#include "stack/linked.h"
#include "util/asan.h"
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

/*
 * The last leg of a jump out of every handler, from the top of the
 * alternate signal stack (linked mode, where every handler runs there).
 * glibc's siglongjmp installs the saved mask before it jumps: a signal
 * pending then (the handler's own, which its mask held back) is delivered
 * right there, on the alternate stack below the frames of the jump, and
 * its handler may jump again, and so on: with signals coming faster than
 * a handler and its jump take, each delivery nested one level deeper,
 * until the 64 KiB ran out (or silently wrote over the mapping below).
 * Everything on the alternate stack is dead once the jump leaves every
 * handler (the kernel's frames, the trampolines', the handlers'), so the
 * jump is made from its top: a signal in that window nests at most one
 * level, and its jump starts again from the top. The buffer is copied
 * first (the program may have copied it into a handler's frame); a
 * handler that comes during the copy and jumps too makes its own jump
 * instead of this one, and one that returns does not touch the copy.
 */
static __thread struct {
    jump_fn fn;
    struct __jmp_buf_tag env;
    int val;
} last_leg;

static void make_last_leg(void)
{
    cap__asan_leaving_frames();
    last_leg.fn(&last_leg.env, last_leg.val);
}

static void from_altstack_top(jump_fn fn, struct __jmp_buf_tag *env, int val)
{
    stack_t ss;
    if (syscall(SYS_sigaltstack, NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
        return; /* the handler ran elsewhere */
    last_leg.fn = fn;
    memcpy(&last_leg.env, env, sizeof last_leg.env);
    last_leg.val = val;
    atomic_signal_fence(memory_order_seq_cst);
    cap__linked_call_on((char *)ss.ss_sp + ss.ss_size, make_last_leg);
}

static _Noreturn void jump(jump_fn *fn, const char *name, struct __jmp_buf_tag *env, int val)
{
    bool from_handler = cap__in_signal_handler();
    if (from_handler)
        cap__sig_handler_jump(env, val, target_sp(env)); /* out of the handler, mostly */
    /* The mask sigsetjmp saved becomes the thread's (a user thread's
     * outside handlers: io/sigmask.h); glibc then installs the word as
     * rewritten, the workers' target. */
    if (env->__mask_was_saved && !cap__in_signal_handler())
        cap__sigmask_jump((uint64_t *)(void *)&env->__saved_mask);
    /* A jump that stays inside a handler stays on its stack (the
     * alternate one, in linked mode) and leaves no chunk of the thread
     * it interrupted, which goes on when the handler returns. */
    if (!cap__in_signal_handler())
        cap__linked_unwind_to(target_sp(env));
    if (*fn == NULL)
        cap__linked_longjmp_init(); /* a longjmp before our constructor ran */
    if (*fn == NULL)
        cap__die("%s: not found in the C library\n", name);
    if (from_handler && !cap__in_signal_handler() && cap__linked_cfg.enabled)
        from_altstack_top(*fn, env, val);
    cap__asan_leaving_frames(); /* ours, above ASan's interceptor's */
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

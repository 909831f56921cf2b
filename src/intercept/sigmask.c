/* SPDX-License-Identifier: MIT */
/*
 * Signal masks: pthread_sigmask and sigprocmask, and the older calls that
 * glibc makes through its internal ones (sighold, sigrelse, sigblock,
 * sigsetmask, siggetmask, and the sigpause forms, which suspend). On a
 * user thread they read and change that thread's mask (io/sigmask.h),
 * never its worker's directly; a change that blocks a signal every user
 * thread now blocks has reached every worker before the call returns, and
 * one that unblocks a pending signal (the process's, or one sent to the
 * thread: io/sigdirect.h) has it delivered before the call returns, as
 * POSIX says. In a handler and on threads the runtime does
 * not run they are libc's: the kernel thread's mask.
 *
 * As glibc's, pthread_sigmask leaves SIGKILL, SIGSTOP and glibc's two
 * internal signals out of the mask silently; both write only the first
 * 64 signals of *old (the kernel writes what it knows, _NSIG / 8 bytes).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigdirect.h"
#include "io/sigmask.h"

/* The user-thread path of pthread_sigmask: 0 or an error number. */
static int change_mask(int how, const sigset_t *set, sigset_t *old)
{
    cap__thread *self = cap__current();
    uint64_t cur = cap__sigmask_of(self), want = cur;
    if (set != NULL) {
        if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
            return EINVAL;
        if (!cap__user_readable(set, sizeof(uint64_t)))
            return EFAULT;
        uint64_t s = cap__sig_bits(set); /* before *old is written: they may alias */
        want = how == SIG_BLOCK ? cur | s : how == SIG_UNBLOCK ? cur & ~s : s;
    }
    if (old != NULL) {
        if (!cap__user_writable(old, sizeof(uint64_t)))
            return EFAULT;
        memcpy(old, &cur, sizeof cur);
    }
    if (set == NULL)
        return 0;
    /* The process's signals the runtime kept that it now accepts become
     * its own (io/sigroute.h), delivered here with the rest. */
    int rc = cap__sigmask_set(self, want);
    /* The mask, then the thread's own pending set (io/sigdirect.h: the
     * sender records, then reads the mask). */
    atomic_thread_fence(memory_order_seq_cst);
    cap__sig_pending_check(self, CAP__OWN_FREE);
    return rc;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(pthread_sigmask)(how, set, old);
    return change_mask(how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(sigprocmask)(how, set, old);
    int rc = change_mask(how, set, old);
    return (int)cap__ic_ret(-rc);
}

/* ---- the older forms ------------------------------------------------------- */

static bool valid_sig(int sig)
{
    return sig >= 1 && sig < NSIG;
}

/* SIG_BLOCK or SIG_UNBLOCK of one signal. */
static int one(int how, int sig)
{
    if (!valid_sig(sig)) {
        errno = EINVAL;
        return -1;
    }
    sigset_t s;
    sigemptyset(&s);
    if (sigaddset(&s, sig) != 0)
        return -1; /* glibc's two internal signals: EINVAL, as glibc's sighold */
    return sigprocmask(how, &s, NULL);
}

int sighold(int sig)
{
    return one(SIG_BLOCK, sig);
}

int sigrelse(int sig)
{
    return one(SIG_UNBLOCK, sig);
}

/* BSD masks: an int whose bit sig - 1 stands for sig (the first 31). */
static sigset_t set_of_bsd(int mask)
{
    sigset_t s;
    sigemptyset(&s);
    for (int sig = 1; sig < 32; sig++)
        if ((unsigned)mask & (1u << (sig - 1)))
            sigaddset(&s, sig);
    return s;
}

static int bsd_of_set(const sigset_t *s)
{
    unsigned m = 0;
    for (int sig = 1; sig < 32; sig++)
        if (sigismember(s, sig) == 1)
            m |= 1u << (sig - 1);
    return (int)m;
}

static int bsd_change(int how, int mask)
{
    sigset_t s = set_of_bsd(mask), old;
    sigemptyset(&old);
    if (sigprocmask(how, &s, &old) != 0)
        return -1;
    return bsd_of_set(&old);
}

int cap__ic_sigblock(int mask) __asm__("sigblock");
int cap__ic_sigblock(int mask)
{
    return bsd_change(SIG_BLOCK, mask);
}

int cap__ic_sigsetmask(int mask) __asm__("sigsetmask");
int cap__ic_sigsetmask(int mask)
{
    return bsd_change(SIG_SETMASK, mask);
}

int cap__ic_siggetmask(void) __asm__("siggetmask");
int cap__ic_siggetmask(void)
{
    sigset_t old;
    sigemptyset(&old);
    if (sigprocmask(SIG_BLOCK, NULL, &old) != 0)
        return -1;
    return bsd_of_set(&old);
}

/* glibc's: is_sig, the X/Open form (sig leaves the mask for the wait);
 * otherwise the BSD one (the wait's mask is sig_or_mask). */
int cap__ic_sigpause_any(int sig_or_mask, int is_sig) __asm__("__sigpause");
int cap__ic_sigpause_any(int sig_or_mask, int is_sig)
{
    if (!cap__ic_user()) {
        static int (*_Atomic real)(int, int); /* glibc declares it only for BSD */
        if (real == NULL)
            real = (int (*)(int, int))cap__real_sym("__sigpause");
        return real(sig_or_mask, is_sig);
    }
    sigset_t s;
    if (is_sig) {
        if (!valid_sig(sig_or_mask)) {
            errno = EINVAL;
            return -1;
        }
        sigemptyset(&s);
        change_mask(SIG_BLOCK, NULL, &s); /* the thread's mask, less sig */
        if (sigdelset(&s, sig_or_mask) != 0)
            return -1; /* glibc's internal signals: EINVAL, not a wait */
    } else {
        s = set_of_bsd(sig_or_mask);
    }
    return sigsuspend(&s);
}

int cap__ic_sigpause_bsd(int mask) __asm__("sigpause");
int cap__ic_sigpause_bsd(int mask)
{
    return cap__ic_sigpause_any(mask, 0);
}

int cap__ic_sigpause_xpg(int sig) __asm__("__xpg_sigpause");
int cap__ic_sigpause_xpg(int sig)
{
    return cap__ic_sigpause_any(sig, 1);
}

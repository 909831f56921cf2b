/* SPDX-License-Identifier: MIT */
/*
 * sigaltstack as the program sees it. A kernel thread's alternate signal
 * stack is shared by the user threads of its worker (docs/pthread-
 * compat.md), and the runtime needs one there: a stack overflow leaves
 * no stack to report it on (overflow.c). So a program's request to
 * disable it (SS_DISABLE, as a thread does before freeing its own at
 * exit) is checked by the kernel, which refuses it while the caller runs
 * on that stack (EPERM) or for bad flags (EINVAL), and then the
 * runtime's own is put back; the program is told SS_DISABLE until it
 * sets another. Before, one thread's disable left every thread of its
 * worker without one: an overflow there killed the process by SIGSEGV
 * with no report. Setting one and queries are the kernel's.
 *
 * State: per kernel thread, as the alternate stack itself:
 * shown_disabled, set by a program's disable, cleared by its next set.
 * Threads the runtime does not run call the kernel as they are.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched/worker.h"
#include "stack/stack.h"

static __thread bool shown_disabled __attribute__((tls_model("initial-exec")));

static int raw(const stack_t *ss, stack_t *old)
{
    return (int)syscall(SYS_sigaltstack, ss, old);
}

int sigaltstack(const stack_t *ss, stack_t *old)
{
    if (cap__worker_self() == NULL)
        return raw(ss, old); /* not a worker's kernel thread */
    bool was_disabled = shown_disabled;
    if (raw(ss, old) != 0)
        return -1; /* EPERM on it, EINVAL, ENOMEM: the kernel's verdict */
    if (ss != NULL) {
        shown_disabled = (ss->ss_flags & SS_DISABLE) != 0;
        int err = shown_disabled ? cap__stack_alt_restore() : 0;
        if (err != 0) {
            errno = err;
            return -1;
        }
    }
    if (old != NULL && was_disabled) {
        memset(old, 0, sizeof *old);
        old->ss_flags = SS_DISABLE; /* what the program asked for last */
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* A tracer process's hold on one kernel thread of the test (ptrace,
 * PTRACE_SYSCALL): attach, then let the thread run from one system call
 * stop to the next, passing on the signals it gets, until the test's
 * condition holds at one of them; the thread is left stopped there for
 * the test to act on, then detached. Used by tests that must catch a
 * worker at an exact system call (the caller sets PR_SET_PTRACER first,
 * for Yama). */
#ifndef CAP_TEST_IO_SYSCALL_TRACER_H
#define CAP_TEST_IO_SYSCALL_TRACER_H

#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "check.h"

/* Attaches to kernel thread tid and lets it run to its next system call
 * stop; false where ptrace is refused. */
static inline bool tracer_attach_syscalls(pid_t tid)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) != 0)
        return false;
    int st;
    CHECK_EQ(ptrace(PTRACE_INTERRUPT, tid, 0, 0), 0);
    CHECK_EQ(waitpid(tid, &st, __WALL), tid);
    CHECK_EQ(ptrace(PTRACE_SYSCALL, tid, 0, 0), 0);
    return true;
}

/* Lets tid go from stop to stop until at(tid) holds at a system call
 * stop, where it stays stopped. */
static inline void tracer_run_until(pid_t tid, bool (*at)(pid_t tid))
{
    for (;;) {
        int st;
        CHECK_EQ(waitpid(tid, &st, __WALL), tid);
        CHECK(WIFSTOPPED(st));
        int sig = WSTOPSIG(st);
        if (sig == (SIGTRAP | 0x80) && at(tid))
            return;
        bool pass = sig != (SIGTRAP | 0x80) && (st >> 16) == 0; /* a signal for it */
        CHECK_EQ(ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)(pass ? sig : 0)), 0);
    }
}

#endif

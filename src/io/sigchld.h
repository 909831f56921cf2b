/* SPDX-License-Identifier: MIT */
/*
 * Children whose end the program has seen, for the dispatch of SIGCHLD
 * (io/sigintr.h).
 *
 * The kernel sends a child's SIGCHLD as the child ends, before a wait can
 * find it. Here the delivery is numbered only when its handler starts, on
 * whichever worker the kernel chose: if that worker's kernel thread is
 * slow to run (a loaded machine), the program may meanwhile have reaped
 * the child and begun another blocking call, which the late delivery
 * would then interrupt. Linux never does that: a signal interrupts a call
 * only if it comes while the call waits, and this one came before the
 * call began (the reap that preceded the call came after it). So the
 * wait wrappers (intercept/proc.c) record each child they see ended, with
 * an entry ticket taken after the wait returned (io/sigintr.c's, in the
 * order of the calls' tickets), and a SIGCHLD from the kernel about that
 * child interrupts only calls that entered before it. A fork that gets
 * the pid again forgets it (a new child), as does that SIGCHLD's
 * dispatch; a small table, overwritten oldest first, bounds the rest
 * (a SIGCHLD merged into another's, or no handler at all, never comes).
 * Lock-free: a reaper may be a signal handler.
 */
#ifndef CAP_IO_SIGCHLD_H
#define CAP_IO_SIGCHLD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* The child whose end info reports (a SIGCHLD's siginfo, or waitid's):
 * exited, killed or dumped; else 0 (a stop, a continue, a send by a
 * process). */
static inline pid_t cap__sigchld_ended(const siginfo_t *info)
{
    switch (info->si_code) {
    case CLD_EXITED:
    case CLD_KILLED:
    case CLD_DUMPED:
        return info->si_pid;
    default:
        return 0;
    }
}

/* A wait returned pid as ended (exited or killed). */
void cap__sigchld_seen(pid_t pid);
/* The entry ticket at which pid was seen ended, 0 if it was not. */
uint64_t cap__sigchld_seen_at(pid_t pid);
/* pid names a new child (fork), or its SIGCHLD was dispatched. */
void cap__sigchld_forget(pid_t pid);

#endif /* CAP_IO_SIGCHLD_H */

/* SPDX-License-Identifier: MIT */
/*
 * Calls that wait for another process, or for a lock another process or
 * another user thread of this one holds: waitpid, wait, wait3, wait4,
 * waitid, flock, lockf(F_LOCK) and system(). Left to libc, each would
 * block its worker, and with it every user thread queued or parked on that
 * worker (including the thread the wait depends on: a flock held by a
 * thread sleeping on the same worker, a child reading a pipe another user
 * thread feeds, was a hang at any worker count). On a user thread:
 *  - the wait family and flock first try without waiting (WNOHANG,
 *    LOCK_NB); only a call that would wait runs on the offload pool
 *    (io/offload.c), so the common cases cost one system call;
 *  - the waits end early on a signal (EINTR, except a handler with
 *    SA_RESTART, which restarts them as the kernel would) and, for the
 *    cancellation points (wait, waitpid, waitid, wait4, lockf), on a
 *    cancel; flock is not a point (POSIX does not name it, nor glibc);
 *  - lockf(F_LOCK) is an fcntl(F_SETLKW), which fd.c offloads;
 *  - system() runs whole on the pool (it waits for its child through
 *    glibc's internal waitpid, which nothing interposes), after the
 *    runtime's pipes without FD_CLOEXEC are given back blocking (as for
 *    posix_spawn, handover.c): its child inherits them. It is a
 *    cancellation point on entry only.
 * From any other thread (or inside a handler) they are libc's calls.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigchld.h"
#include "io/sigintr.h"
#include "io/sigmask.h"

/* ---- the wait family ------------------------------------------------------- */

/* What a wait returned: a child seen ended (io/sigchld.h) is recorded
 * before the caller can begin another call. */
static long seen_status(long r, const int *status)
{
    if (r > 0 && (WIFEXITED(*status) || WIFSIGNALED(*status)))
        cap__sigchld_seen((pid_t)r);
    return r;
}

static long seen_info(long r, const siginfo_t *info)
{
    if (r == 0)
        cap__sigchld_seen(cap__sigchld_ended(info)); /* (0: none, ignored) */
    return r;
}

pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    int local;
    if (status == NULL)
        status = &local; /* to tell an end from a stop */
    if (!cap__ic_enter())
        return (pid_t)seen_status(syscall(SYS_wait4, pid, status, options, ru), status);
    long r = seen_status(syscall(SYS_wait4, pid, status, options | WNOHANG, ru), status);
    if (r != 0 || (options & WNOHANG))
        return (pid_t)r;
    cap__sys_call c = { SYS_wait4, { pid, (long)status, options, (long)ru }, 0 };
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    long w = cap__ic_offload_sys(&c, &in);
    if (w == -EINTR) {
        /* The kernel's wait looks for a child that changed state before it
         * looks at a signal: the SIGCHLD of the awaited child's own exit
         * (its handler interrupted the wait, perhaps before a pool thread
         * took the job) does not make the wait fail. */
        long again = syscall(SYS_wait4, pid, status, options | WNOHANG, ru);
        if (again > 0)
            w = again;
    }
    return (pid_t)cap__ic_ret_cancel(seen_status(w, status));
}

pid_t waitpid(pid_t pid, int *status, int options)
{
    return wait4(pid, status, options, NULL);
}

pid_t wait(int *status)
{
    return wait4(-1, status, 0, NULL);
}

pid_t wait3(int *status, int options, struct rusage *ru)
{
    return wait4(-1, status, options, ru);
}

int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    /* si_pid tells whether a try found a child: cleared first, since
     * POSIX leaves the siginfo unspecified when there is none. */
    siginfo_t local;
    siginfo_t *probe = info != NULL ? info : &local;
    probe->si_pid = 0;
    if (!cap__ic_enter() || (options & WNOHANG))
        return (int)seen_info(syscall(SYS_waitid, type, id, probe, options, NULL), probe);
    long r = seen_info(syscall(SYS_waitid, type, id, probe, options | WNOHANG, NULL), probe);
    if (r != 0 || probe->si_pid != 0)
        return (int)r;
    cap__sys_call c = { SYS_waitid, { type, id, (long)probe, options, 0 }, 0 };
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    long w = cap__ic_offload_sys(&c, &in);
    if (w == -EINTR) { /* as in wait4: a child that changed state comes first */
        probe->si_pid = 0;
        if (syscall(SYS_waitid, type, id, probe, options | WNOHANG, NULL) == 0 &&
            probe->si_pid != 0)
            w = 0;
    }
    return (int)cap__ic_ret_cancel(seen_info(w, probe));
}

/* ---- locks ------------------------------------------------------------------- */

int flock(int fd, int op)
{
    if (!cap__ic_user() || (op & LOCK_NB) || (op & (LOCK_SH | LOCK_EX)) == 0)
        return (int)syscall(SYS_flock, fd, op);
    /* The try is a raw call: a lock taken after a wait leaves errno as
     * the kernel's blocking flock does, not at the try's EWOULDBLOCK. */
    long r = cap__sys6(SYS_flock, fd, op | LOCK_NB, 0, 0, 0, 0);
    if (r != -EWOULDBLOCK)
        return (int)cap__ic_ret(r);
    cap__sys_call c = { SYS_flock, { fd, op }, 0 };
    return (int)cap__ic_ret(cap__ic_offload_sys(&c, &cap__intr_restart));
}

int lockf(int fd, int cmd, off_t len)
{
    if (cmd != F_LOCK)
        return CAP__REAL(lockf)(fd, cmd, len);
    /* glibc's F_LOCK: an exclusive record lock from the current offset. */
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = len };
    return fcntl(fd, F_SETLKW, &fl); /* our wrapper (fd.c): a point, offloaded */
}

int lockf64(int fd, int cmd, off_t len) __attribute__((alias("lockf")));

/* ---- system ------------------------------------------------------------------ */

struct system_call {
    const char *command;
    sigset_t mask; /* the calling thread's (io/sigmask.h) */
    int result, err;
};

/* glibc's system() gives its child the calling thread's signal mask: the
 * caller's, not the pool thread's (every signal blocked), for the length
 * of the call. Exactly the caller's: with the kick (SIGURG) blocked too,
 * as other pool jobs keep it (offload.c), every command started so began
 * with SIGURG blocked, unlike NPTL's (a program on this library so
 * started hung on two workers before its workers unblocked the kick,
 * sched/worker.c). A late kick meant for an earlier job that this
 * unblocks runs its handler here and interrupts nothing of glibc's
 * system(): its waitpid is retried on EINTR, and its posix_spawn blocks
 * every signal itself. */
static void run_system(void *arg)
{
    struct system_call *c = arg;
    sigset_t saved;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &c->mask, &saved, _NSIG / 8);
    c->result = CAP__REAL(system)(c->command);
    c->err = errno;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

int system(const char *command)
{
    if (!cap__ic_enter())
        return CAP__REAL(system)(command);
    cap__fd_spawning();
    struct system_call c = { .command = command };
    sigemptyset(&c.mask);
    uint64_t mine = cap__sigmask_of(cap__current());
    memcpy(&c.mask, &mine, sizeof mine);
    /* glibc's system() blocks SIGCHLD in the calling thread while it
     * waits, so that the program's SIGCHLD handler cannot reap the
     * command's child first (system would say -1, ECHILD): the calling
     * user thread's mask, here, not only the pool thread's. The child
     * still gets the caller's mask as it was (c.mask, taken above). */
    sigset_t chld, saved;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &saved); /* our wrapper: this user thread's mask */
    int rc = cap__offload_wait(run_system, &c);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0)
        return CAP__REAL(system)(command);
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    if (c.result < 0)
        errno = c.err;
    return c.result;
}

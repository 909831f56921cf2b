/* SPDX-License-Identifier: MIT */
/*
 * Descriptors handed to code that does not go through our wrappers: a
 * child process (fork, _Fork, vfork, daemon, posix_spawn, posix_spawnp,
 * popen), a stdio stream (fdopen: glibc's stdio reads and writes through
 * its internal calls) and POSIX AIO (aio.c: glibc's own threads transfer
 * through its internal calls too).
 *
 * The runtime creates pipes non-blocking and serves them with plain
 * read/write (intercept/fd.c). Such code would see EAGAIN where the
 * application expects a blocking pipe, so before it can touch one, every
 * owned pipe gets the blocking mode the application believes it has back
 * (cap__fd_disown_pipes, io/fd.h) and is served by RWF_NOWAIT from then
 * on. All pipes, not only the ones named: a child inherits every
 * descriptor without FD_CLOEXEC, and dups share the non-blocking flag. A
 * child that execs at once (posix_spawn, posix_spawnp, popen, system)
 * leaves the pipes, FIFOs and eventfds with FD_CLOEXEC owned
 * (cap__fd_spawning); one its file actions dup2 is given back when the
 * action is added (posix_spawn_file_actions_adddup2, below). A forked
 * child holds every descriptor until it execs, if ever, and may use
 * any: fork, _Fork, vfork, daemon and forkpty give back all. Sockets
 * keep their existing rule (disowned when dup'ed onto 0, 1 or 2), and
 * none stays sole: the child holds a reference to each (cap__fd_forking,
 * io/fd.h). A socket, a FIFO or an eventfd given to fdopen is disowned
 * with its dups (cap__fd_disown_file): stdio read EAGAIN from it; the
 * other owned descriptors keep their fast paths (a FIFO fopen'ed through
 * the open wrapper used to take them all).
 *
 * dprintf/vdprintf (and their _FORTIFY_SOURCE names) write through
 * glibc's internal write too: they format into memory here and write
 * through our write(), so on a user thread they park instead of failing
 * with EAGAIN on a full owned pipe (or blocking the worker on any other).
 *
 * vfork is fork (below); daemon and forkpty fork with our fork (and
 * login_tty's dup2s are ours); popen gives pipes back like posix_spawn.
 * Fork handlers (atfork.c) run for fork, vfork, daemon and forkpty, not
 * for _Fork, posix_spawn, popen or system, as in glibc.
 * A thread between the ownership test and the plain read or write of an
 * owned pipe as it is given back, on another worker or interrupted by a
 * handler that forks, starts over at the test (io/fd.c, cap__fd_disown;
 * arch/ownedxfer.h). Not covered: raw clone, whose children inherit
 * non-blocking pipes.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pty.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utmp.h>

#include "intercept/atfork.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigchld.h"
#include "io/sigintr.h"
#include "io/sigmask.h"
#include "io/ttyfile.h"
#include "sched/worker.h"
#include "sync/sync.h"
#include "util/asan.h"
#include "util/die.h"

/* The runtime's steps around a fork, shared by fork and _Fork. The
 * sigaction table's lock is held across the fork (src/stack/signal.c),
 * and the default thread attributes' (thread/default_attr.c) and the
 * terminal table's (io/ttyfile.c).
 * Inside a signal handler (POSIX.1-2024 lists _Fork as async-signal-
 * safe) the handler may have interrupted a holder of a runtime lock on
 * this kernel thread, which cannot let go before the handler returns. So
 * none of these steps waits for a lock such a holder may have: the
 * pipes' give-back changes flags and modes and leaves its wake-ups to the
 * dispatch after the handler (io/pipe.h); the two locks above know their
 * holder's kernel thread and are skipped when it is this one
 * (util/ownspin.h); the sigaction table's holders block signals; the
 * fork handlers' list is read without its lock (atfork.c); and the
 * child's steps reset the locks they touch instead of taking them.
 * With handlers (fork), the handlers of cap_atfork (atfork.c) run outside
 * the runtime's own steps: the prepare handlers before them (they may
 * park), the parent and child handlers after them (the child's see the
 * child's runtime and may create threads and call sigaction); glibc's list
 * runs inside the real fork. Without (_Fork), neither list runs, as for
 * glibc's _Fork, which also leaves malloc's and stdio's locks as they are:
 * its child may call async-signal-safe functions only, which here are
 * runtime code (a read parks), so the child gets the runtime's own steps
 * all the same: without them it shared the parent's I/O instances, and a
 * read of a pipe parked for good (the parent's poller took the event). */
/* With handlers, the runtime's locks (the sigaction table's, with every
 * signal blocked, the default attributes' and the terminal table's) are
 * taken by a handler of glibc's own list that the library registers first
 * (a constructor), so glibc runs its prepare step after every other
 * prepare handler of that list and its parent and child steps before the
 * others. Taken before glibc's fork, they were held while a library's
 * prepare handler waited for its own mutex, parked, and that mutex's
 * holder spun for good in sigaction (or a thread creation, a terminal
 * call) before it could unlock: fork deadlocked where NPTL does not.
 * Only for the wrapper's forks (the forking thread's `forking`): glibc's
 * internal forks leave them alone, as before. glibc holds its fork lock
 * from the prepare handlers to the parent's and child's, so the held
 * state can be one, the process's. */
static sigset_t fork_saved_mask;
static bool fork_attr_held, fork_tty_held;

static bool wrapper_fork(void)
{
    cap__thread *self = cap__current();
    return self != NULL && self->forking;
}

static void runtime_prepare(void)
{
    if (!wrapper_fork())
        return;
    cap__sig_fork_prepare(&fork_saved_mask);
    fork_attr_held = cap__thread_default_attr_fork_hold();
    fork_tty_held = cap__ttyfile_fork_hold();
}

static void runtime_after(bool child)
{
    if (!wrapper_fork())
        return;
    cap__ttyfile_fork_release(child, fork_tty_held);
    cap__thread_default_attr_fork_release(fork_attr_held);
}

static void runtime_parent(void)
{
    runtime_after(false);
}

static void runtime_child(void)
{
    runtime_after(true);
}

/* Early (priority 101): before the constructors of libraries loaded
 * after this one, whose handlers glibc then runs first. */
__attribute__((constructor(101))) static void register_runtime_fork_steps(void)
{
    if (pthread_atfork(runtime_prepare, runtime_parent, runtime_child) != 0)
        cap__die("cannot register the runtime's fork handler\n");
}

static pid_t fork_steps(bool handlers)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    cap__atfork_snap snap;
    if (handlers)
        cap__atfork_prepare(&snap);
    cap__fd_forking();
    sigset_t saved;
    pid_t pid;
    int e;
    cap__thread *self = cap__current();
    if (handlers && self != NULL) {
        self->forking = true; /* runtime_prepare and runtime_parent/child */
        pid = CAP__REAL(fork)();
        e = errno; /* a failed fork's, for the caller */
        self->forking = false;
        saved = fork_saved_mask;
    } else {
        cap__sig_fork_prepare(&saved);
        bool attr_held = cap__thread_default_attr_fork_hold();
        bool tty_held = cap__ttyfile_fork_hold();
        if (!handlers)
            cap__asan_fork_settle(); /* sanitized builds: util/asan.h */
        pid = handlers ? CAP__REAL(fork)() : CAP__REAL(_Fork)();
        e = errno;
        cap__ttyfile_fork_release(pid == 0, tty_held);
        cap__thread_default_attr_fork_release(attr_held);
    }
    if (pid > 0)
        cap__sigchld_forget(pid); /* a new child: an old one's end no longer counts */
    if (pid == 0) { /* before any signal is let in */
        cap__sched_forked(cap__current());
        cap__sig_jumps_forked(cap__current()); /* the parent's (io/sigsafe.h) */
        /* The kept mutexes' table before anything that may look in it:
         * the I/O layer's reset initialises a mutex through our
         * pthread_mutex_init, which does (a bucket lock held by a lost
         * thread hung the child). */
        cap__libc_kept_forked();
        cap__robust_forked();
        cap__io_forked();
        cap__futex_key_forked();
        cap__stream_turns_forked();
        cap__libc_tls_forked();
        cap__syslog_forked();
        cap__sigmask_forked(cap__current(), &saved);
    }
    cap__sig_fork_done(&saved);
    if (handlers) {
        if (pid == 0)
            cap__atfork_child(&snap);
        else
            cap__atfork_parent(&snap);
    }
    cap__ic_set_errno(e); /* the fork handlers may have parked */
    return pid;
}

pid_t fork(void)
{
    return fork_steps(true);
}

/* glibc 2.34's fork without fork handlers (POSIX.1-2024), which programs
 * call from signal handlers too: see fork_steps. A program can only
 * reach this name where libc defines it. */
pid_t _Fork(void)
{
    return fork_steps(false);
}

/* vfork: a wrapper cannot return into a vfork child (it would unwind the
 * frame the suspended parent returns through), and the real vfork's
 * child would inherit the runtime's non-blocking pipes (an exec'd shell
 * read failed with EAGAIN). POSIX allows vfork to be fork, so it is:
 * the same for a child that only execs or exits, at the cost of copying
 * the page tables. */
pid_t vfork(void)
{
    return fork();
}

/* glibc's daemon forks through its internal fork, which no wrapper sees:
 * its child ran the parent's other threads (and kept the runtime's pipes
 * non-blocking and the parent's I/O instances). The same steps, with our
 * fork. */
int daemon(int nochdir, int noclose)
{
    switch (fork()) {
    case -1:
        return -1;
    case 0:
        break;
    default:
        _exit(0);
    }
    if (setsid() < 0)
        return -1;
    if (!nochdir && chdir("/") != 0)
        return -1;
    if (!noclose) {
        int fd = open("/dev/null", O_RDWR);
        if (fd < 0)
            return -1;
        for (int i = 0; i < 3; i++)
            if (fd != i && dup2(fd, i) < 0)
                return -1;
        if (fd > 2)
            close(fd);
    }
    return 0;
}

/* glibc's login_tty makes fd the caller's terminal and standard streams
 * with its internal dup2 and close, which the descriptor table does not
 * see (a stale record of 0, 1 or 2 would go on describing what was there:
 * an owned pipe's record made reads of the terminal plain calls that
 * expect EAGAIN). The same steps through the wrappers. */
int login_tty(int fd)
{
    setsid();
    if (ioctl(fd, TIOCSCTTY, 0) == -1)
        return -1;
    for (int i = 0; i < 3; i++)
        while (dup2(fd, i) == -1 && errno == EBUSY) {
        }
    if (fd > 2)
        close(fd);
    return 0;
}

/* glibc's forkpty forks through its internal fork, as daemon does: its
 * child shared the parent's I/O instances, and a read there that had to
 * wait never returned. openpty, then our fork and login_tty. */
int forkpty(int *amaster, char *name, const struct termios *termp, const struct winsize *winp)
{
    int master, terminal;
    if (openpty(&master, &terminal, name, termp, winp) == -1)
        return -1;
    pid_t pid = fork();
    if (pid == -1) {
        int e = errno;
        close(master);
        close(terminal);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(master);
        if (login_tty(terminal) != 0)
            _exit(1);
        return 0;
    }
    *amaster = master;
    close(terminal);
    return pid;
}

/* glibc's popen spawns its child internally (no posix_spawn call we see):
 * the child inherits every descriptor without FD_CLOEXEC, given back
 * blocking first as for posix_spawn. */
FILE *popen(const char *command, const char *mode)
{
    cap__fd_spawning();
    enum cap__sigmask_owned owned = cap__sigmask_own(); /* the child's mask (exec.c) */
    FILE *f = CAP__REAL(popen)(command, mode);
    int e = errno;
    cap__sigmask_back(owned);
    errno = e;
    return f;
}

int posix_spawn(pid_t *restrict pid, const char *restrict path,
                const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                char *const argv[restrict], char *const envp[restrict])
{
    cap__fd_spawning();
    enum cap__sigmask_owned owned = cap__sigmask_own(); /* the child's mask (exec.c) */
    int rc = CAP__REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
    cap__sigmask_back(owned);
    return rc;
}

int posix_spawnp(pid_t *restrict pid, const char *restrict file,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                 char *const argv[restrict], char *const envp[restrict])
{
    cap__fd_spawning();
    enum cap__sigmask_owned owned = cap__sigmask_own(); /* the child's mask (exec.c) */
    int rc = CAP__REAL(posix_spawnp)(pid, file, fa, attr, argv, envp);
    cap__sigmask_back(owned);
    return rc;
}

/* The child's dup of fd shares its open file, and with it O_NONBLOCK,
 * whether fd has FD_CLOEXEC or not: that file is given back now (with its
 * other numbers), the other owned descriptors at the spawn only if the
 * child inherits them. A number not open is left to glibc's check. */
int posix_spawn_file_actions_adddup2(posix_spawn_file_actions_t *fa, int fd, int newfd)
{
    cap__fd_disown_file(fd);
    return CAP__REAL(posix_spawn_file_actions_adddup2)(fa, fd, newfd);
}

void cap__ic_hand_over(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f != NULL && cap__fd_has(f, CAP__FDF_OWNED)) {
        if (cap__fd_has(f, CAP__FDF_PIPE))
            cap__fd_disown_pipes();
        else
            cap__fd_disown_file(fd); /* a socket, FIFO or eventfd, and its dups */
    }
}

FILE *fdopen(int fd, const char *mode)
{
    cap__ic_hand_over(fd);
    return CAP__REAL(fdopen)(fd, mode);
}

int vdprintf(int fd, const char *fmt, va_list ap)
{
    char *buf;
    int n = vasprintf(&buf, fmt, ap);
    if (n < 0)
        return -1;
    for (size_t done = 0; done < (size_t)n;) {
        ssize_t r = write(fd, buf + done, (size_t)n - done); /* our wrapper */
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        done += (size_t)r;
    }
    free(buf);
    return n;
}

int dprintf(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
    (void)flag; /* the %n check of the fortified version is not repeated */
    return vdprintf(fd, fmt, ap);
}

int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

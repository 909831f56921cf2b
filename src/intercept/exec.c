/* SPDX-License-Identifier: MIT */
/*
 * The exec family. A new program starts with the signal mask of the
 * kernel thread that called exec, which on a worker is the workers' mask
 * (io/sigmask.h: the signals every user thread blocks), not the calling
 * thread's, which POSIX gives it. So on a user thread each of these
 * installs the thread's own mask on its kernel thread for the call, and
 * the workers' again if the call fails and returns. (posix_spawn and popen
 * do the same: handover.c. A fork's child has the forking thread's mask
 * already.)
 *
 * glibc makes execl, execlp, execle, execv and execvp through its
 * internal execve and execvpe, which no interposition sees: all are
 * redone here on the interposed ones, with glibc's argument handling.
 * Elsewhere, and in a handler (where the mask is the kernel thread's
 * own), each is libc's in effect: the mask step does nothing.
 *
 * The runtime made the descriptors it created non-blocking underneath;
 * the new program inherits those without FD_CLOEXEC, and would see
 * O_NONBLOCK the application never set (a blocking read of an inherited
 * socket failing with EAGAIN). Each is given back its blocking mode first
 * (cap__fd_exec, io/fd.h), but for files a child process holds too.
 * And under CAP_NETIO=uring the polls of close-on-exec descriptors are
 * cancelled first, so that the exec closes their files at once (armed by
 * another worker, they stayed open for milliseconds into the new program:
 * io/exec_closes_cloexec_sockets), and armed again if the call fails
 * (cap__io_exec_begin, io/io.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "io/fd.h"
#include "io/io.h"
#include "io/sigdirect.h"
#include "io/sigmask.h"

/* What exec_before did, for exec_failed. */
struct exec_state {
    enum cap__sigmask_owned owned; /* what cap__sigmask_own did */
    uint8_t carried[CAP__SIG_MAX]; /* its own pending signals sent along (sigdirect.h) */
};

/* Before an exec: the descriptors' modes and the uring polls (above),
 * then the calling thread's own mask on its kernel thread, and there a
 * copy of each signal pending for the thread alone that the mask holds:
 * the new program starts with them pending, as Linux keeps a thread's
 * pending signals across execve (they live in the thread's control
 * block, which the exec drops). */
static void exec_before(struct exec_state *st)
{
    cap__fd_exec();
    cap__io_exec_begin();
    st->owned = cap__sigmask_own();
    if (st->owned == CAP__MASK_OWNED)
        cap__sig_exec_carry(cap__current(), st->carried);
}

/* The exec returned: the copies taken back, the workers' mask and the
 * polls back. errno kept. */
static void exec_failed(const struct exec_state *st)
{
    int e = errno;
    if (st->owned == CAP__MASK_OWNED)
        cap__sig_exec_take_back(st->carried);
    cap__sigmask_back(st->owned);
    cap__io_exec_failed();
    errno = e;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    struct exec_state st;
    exec_before(&st);
    int r = CAP__REAL(execve)(path, argv, envp);
    exec_failed(&st);
    return r;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    struct exec_state st;
    exec_before(&st);
    int r = CAP__REAL(execvpe)(file, argv, envp);
    exec_failed(&st);
    return r;
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    struct exec_state st;
    exec_before(&st);
    int r = CAP__REAL(fexecve)(fd, argv, envp);
    exec_failed(&st);
    return r;
}

/* glibc 2.34's; a call we did not see would skip both steps above. */
int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    struct exec_state st;
    exec_before(&st);
    int r = CAP__REAL(execveat)(dirfd, path, argv, envp, flags);
    exec_failed(&st);
    return r;
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The variadic forms: arguments up to the NULL into an array on the
 * stack, as glibc's do (E2BIG past INT_MAX of them); execle's
 * environment follows the NULL. */
static ptrdiff_t count_args(const char *arg, va_list *ap)
{
    if (arg == NULL)
        return 0;
    ptrdiff_t n = 1;
    while (va_arg(*ap, const char *) != NULL)
        n++;
    return n;
}

/* argv[0..n-1] from arg and the n - 1 arguments after it, then NULL;
 * *ap is left after the terminating NULL. */
static void fill_args(char **argv, ptrdiff_t n, const char *arg, va_list *ap)
{
    if (n > 0)
        argv[0] = (char *)arg;
    for (ptrdiff_t i = 1; i < n; i++)
        argv[i] = va_arg(*ap, char *);
    if (n > 0)
        (void)va_arg(*ap, char *); /* the NULL */
    argv[n] = NULL;
}

enum list_exec { BY_PATH, BY_PATH_ENV, BY_SEARCH };

/* The list form `how` of target: count reads the arguments once to count
 * them, fill again to copy them (and execle's environment after). */
static int exec_list(enum list_exec how, const char *target, const char *arg, va_list *count,
                     va_list *fill)
{
    ptrdiff_t n = count_args(arg, count);
    if (n >= INT_MAX) {
        errno = E2BIG;
        return -1;
    }
    char *argv[n + 1];
    fill_args(argv, n, arg, fill);
    char *const *envp = how == BY_PATH_ENV ? va_arg(*fill, char *const *) : environ;
    return how == BY_SEARCH ? execvpe(target, argv, envp) : execve(target, argv, envp);
}

int execl(const char *path, const char *arg, ...)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    va_list count, fill;
    va_start(count, arg);
    va_copy(fill, count);
    int r = exec_list(BY_PATH, path, arg, &count, &fill);
    va_end(fill);
    va_end(count);
    return r;
}

int execlp(const char *file, const char *arg, ...)
{
    va_list count, fill;
    va_start(count, arg);
    va_copy(fill, count);
    int r = exec_list(BY_SEARCH, file, arg, &count, &fill);
    va_end(fill);
    va_end(count);
    return r;
}

int execle(const char *path, const char *arg, ...)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    va_list count, fill;
    va_start(count, arg);
    va_copy(fill, count);
    int r = exec_list(BY_PATH_ENV, path, arg, &count, &fill);
    va_end(fill);
    va_end(count);
    return r;
}

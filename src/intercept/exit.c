/* SPDX-License-Identifier: MIT */
/*
 * _exit and _Exit: the process ends at once, no atexit handlers, no
 * stream flush, as in glibc; but first the descriptor backend lets go of
 * the files its waits hold (io.h, cap__io_exit_now), as exit() and a
 * default-terminate signal already make it do. Under CAP_NETIO=uring the
 * poll requests of the waits hold their sockets, and the kernel ends a
 * dead process's requests only in a worker of its own, milliseconds
 * after the process can be reaped: a server restarted at once could not
 * bind its port (tests/io/exit_now_closes_sockets_at_once). Under epoll
 * and poll, and in a fork's child, there is nothing to let go of.
 *
 * Both are async-signal-safe and made here as glibc makes them: the
 * exit_group system call, which does not return. glibc's own calls of
 * _exit (posix_spawn's child after a failed exec, which shares the
 * parent's memory) bind inside libc and never come here; a raw vfork or
 * clone(CLONE_VM) child of the program's that does is told apart by its
 * pid (cap__io_exit_now).
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/io.h"

static void __attribute__((noreturn)) exit_now(int status)
{
    cap__io_exit_now();
    for (;;)
        cap__sys6(SYS_exit_group, status, 0, 0, 0, 0, 0);
}

void _exit(int status)
{
    exit_now(status);
}

void _Exit(int status)
{
    exit_now(status);
}

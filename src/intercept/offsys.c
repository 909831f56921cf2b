/* SPDX-License-Identifier: MIT */
/*
 * A system call run whole on the offload pool (io/offload.c): what the
 * wrappers hand over that can only wait in the kernel, on an object the
 * descriptor backends cannot watch (children, file locks, System V and
 * POSIX message queues: proc.c, ipc.c). Each wrapper first tries without
 * waiting on its own thread and calls this only for a call that would
 * wait; `in` says what may interrupt or cancel it.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "io/io.h"

static void run_sys(void *arg)
{
    cap__sys_call *c = arg;
    c->result = cap__ic_sys(syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4]));
}

long cap__ic_offload_sys(cap__sys_call *c, const cap__intr *in)
{
    return cap__offload_call(run_sys, c, &c->result, in);
}

long cap__ic_offload_sys_until(cap__sys_call *c, const cap__intr *in, uint64_t deadline,
                               long expired)
{
    return cap__offload_call_until(run_sys, c, &c->result, in, deadline, expired);
}

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
#include <time.h>
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

/* c made at once: its absolute timeout, the fifth argument, replaced by
 * one long gone, so that the kernel tries the call and does not wait (the
 * caller's own may still be ahead on CLOCK_REALTIME after a clock step). */
static void run_sys_now(void *arg)
{
    static const struct timespec past = { 0, 0 };
    cap__sys_call *c = arg;
    c->result = cap__ic_sys(syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], (long)&past));
}

long cap__ic_offload_sys_until(cap__sys_call *c, const cap__intr *in, uint64_t deadline)
{
    return cap__offload_call_until(run_sys, c, &c->result, in, deadline, run_sys_now);
}

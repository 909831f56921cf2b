/* SPDX-License-Identifier: MIT */
/*
 * C11 <threads.h> threads for the pthread compatibility header
 * (include/capriccio/pthread.h): thrd_create makes a user thread, as
 * pthread_create there does, and the calls on it map C11's results onto
 * ours. The rest of <threads.h> needs nothing here: mtx_*, cnd_*, tss_*,
 * call_once, thrd_sleep and thrd_yield are the library's already, on
 * glibc's own objects (src/intercept/libc_mutex.c, libc_cond.c,
 * libc_key.c, sleep.c, yield.c), and thrd_current and thrd_equal are
 * renames.
 *
 * A C11 start function returns an int, ours a void *: like glibc's
 * thrd_create, the function is called through our pointer type (on
 * x86_64 an int comes back in the low half of the register a pointer
 * does), and thrd_join keeps the low 32 bits. No allocation per thread.
 */
#include <errno.h>
#include <stdint.h>
#include <threads.h>

#include "capriccio.h"

int cap_compat_thrd_create(thrd_t *thr, thrd_start_t func, void *arg);
int cap_compat_thrd_join(thrd_t thr, int *res);
int cap_compat_thrd_detach(thrd_t thr);
_Noreturn void cap_compat_thrd_exit(int res);

_Static_assert(sizeof(thrd_t) == sizeof(cap_thread_t), "a handle is a thrd_t");

/* C11's result for one of ours: EAGAIN is memory or handles run out. */
static int c11_result(int rc)
{
    return rc == 0 ? thrd_success : rc == EAGAIN ? thrd_nomem : thrd_error;
}

int cap_compat_thrd_create(thrd_t *thr, thrd_start_t func, void *arg)
{
    cap_thread_t t;
    /* Through void (*)(void), the cast GCC takes as deliberate. */
    int rc = cap_thread_create(&t, NULL, (void *(*)(void *))(void (*)(void))func, arg);
    if (rc == 0)
        *thr = t;
    return c11_result(rc);
}

int cap_compat_thrd_join(thrd_t thr, int *res)
{
    void *value;
    int rc = cap_thread_join(thr, &value);
    if (rc == 0 && res != NULL)
        *res = (int)(intptr_t)value;
    return rc == 0 ? thrd_success : thrd_error;
}

int cap_compat_thrd_detach(thrd_t thr)
{
    return cap_thread_detach(thr) == 0 ? thrd_success : thrd_error;
}

void cap_compat_thrd_exit(int res)
{
    cap_thread_exit((void *)(intptr_t)res);
}

/* SPDX-License-Identifier: MIT */
/*
 * Thread cancellation, as pthread_cancel: a request is acted on only at a
 * cancellation point (deferred cancellation). The points are
 * cap_cond_wait, cap_cond_timedwait, cap_cond_clockwait, cap_thread_join,
 * cap_sleep_ns, cap_usleep, cap_sem_wait, cap_sem_timedwait,
 * cap_sem_clockwait and cap_testcancel, and the intercepted I/O calls
 * POSIX names (read, write, accept, connect, poll, ...; the list and the
 * treatment of partial transfers are in docs/pthread-compat.md).
 * Mutex, rwlock, barrier and spin waits are not points, as in POSIX.
 *
 * Acting on a request runs the cleanup handlers (innermost first), then
 * the thread-specific data destructors, and ends the thread with
 * CAP_CANCELED as its exit value. A thread cancelled inside a condition
 * wait holds the mutex again when its handlers run; one cancelled inside
 * cap_thread_join leaves the target joinable. A cancelled wait never
 * consumes a signal, post or wake-up meant for another waiter.
 *
 * The stack is not unwound: handlers run on top of it, then the thread
 * switches away for good, so C++ destructors of the frames in between do
 * not run (use cleanup handlers).
 *
 * CAP_CANCEL_ASYNCHRONOUS is accepted and reported back, but acts like
 * DEFERRED, except that setting it (or enabling cancellation while it is
 * set) acts on a pending request at once: POSIX lets asynchronous
 * cancellation act "at any time", and a user-level thread can be stopped
 * safely only where it switches.
 */
#ifndef CAPRICCIO_CANCEL_H
#define CAPRICCIO_CANCEL_H

#include "../capriccio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAP_CANCELED ((void *)-1) /* exit value of a cancelled thread */

#define CAP_CANCEL_ENABLE 0
#define CAP_CANCEL_DISABLE 1
#define CAP_CANCEL_DEFERRED 0
#define CAP_CANCEL_ASYNCHRONOUS 1

/* Requests cancellation of thread; returns at once. ESRCH on an unknown or
 * stale handle; 0 for a finished thread that is not yet joined. */
int cap_thread_cancel(cap_thread_t thread);
/* EINVAL for other values; old may be NULL. */
int cap_thread_setcancelstate(int state, int *old);
int cap_thread_setcanceltype(int type, int *old);
/* A cancellation point and nothing else. */
void cap_testcancel(void);

/* Cleanup handlers: cap_cleanup_push(routine, arg) and cap_cleanup_pop(execute)
 * are macros that must pair up in one block, exactly like
 * pthread_cleanup_push/pop (the frame lives in that block). pop with a
 * nonzero execute runs the handler. Handlers run when the thread is
 * cancelled or calls cap_thread_exit; returning from the thread's start
 * function with handlers pushed is undefined, as in POSIX. */
typedef struct cap_cleanup_frame {
    void (*routine)(void *);
    void *arg;
    struct cap_cleanup_frame *prev;
} cap_cleanup_frame_t;

void cap_cleanup_frame_push(cap_cleanup_frame_t *frame, void (*routine)(void *), void *arg);
void cap_cleanup_frame_pop(cap_cleanup_frame_t *frame, int execute);

#define cap_cleanup_push(routine, arg)                                           \
    do {                                                                         \
        cap_cleanup_frame_t cap_cleanup_frame_;                                  \
        cap_cleanup_frame_push(&cap_cleanup_frame_, (routine), (arg));

#define cap_cleanup_pop(execute)                                                 \
        cap_cleanup_frame_pop(&cap_cleanup_frame_, (execute));                   \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* CAPRICCIO_CANCEL_H */

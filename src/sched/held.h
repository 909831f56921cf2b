/* SPDX-License-Identifier: MIT */
/*
 * Locks owned by the kernel thread that a user thread holds between
 * calls (glibc's stdio FILE lock, taken by flockfile): let go whenever
 * the thread switches away and taken again before it goes on.
 *
 * Such a lock names the kernel thread as its owner and lets that owner in
 * again (it is recursive). Held across a park, it would let every other
 * user thread of the worker into the critical section, and make a thread
 * of another worker block its whole worker; after a migration its holder
 * would wait for itself (DESIGN.md, Hazard). The lock's real owner is a
 * user-level lock taken first (the stream's turn, intercept/stdio_turn.h),
 * which keeps the other user threads out while the kernel lock is free.
 *
 * Invariants:
 *  - a thread's list is touched only by the thread itself (push and
 *    remove while it runs; release and retake at its switches);
 *  - while a thread is switched away it holds none of the listed locks;
 *    while it runs it holds each as many times as it did when it left.
 */
#ifndef CAP_SCHED_HELD_H
#define CAP_SCHED_HELD_H

struct cap__thread;

typedef struct cap__held_lock {
    struct cap__held_lock *next;
    /* Lets the lock go entirely (every level), remembering how deep. */
    void (*release)(struct cap__held_lock *l);
    /* Takes it again as deep as it was; may block the kernel thread while
     * another kernel thread is inside a call holding it (never long: no
     * holder parks). */
    void (*retake)(struct cap__held_lock *l);
} cap__held_lock;

/* The calling user thread holds l from now on / no longer. */
void cap__held_push(cap__held_lock *l);
void cap__held_remove(cap__held_lock *l);
/* Forgets the calling thread's list without releasing anything (a fork's
 * child, where glibc made every stream's lock free). */
void cap__held_forget_all(void);

/* Called by the worker around every switch of a thread whose list is not
 * empty (worker.c; the test of the list is inline there). A callback may
 * remove its own lock from the list (cap__held_remove). */
void cap__held_release_all(struct cap__thread *t);
void cap__held_retake_all(struct cap__thread *t);

#endif /* CAP_SCHED_HELD_H */

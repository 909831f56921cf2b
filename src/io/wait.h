/* SPDX-License-Identifier: MIT */
/*
 * Waiter records of the I/O layer (private to src/io; io.h embeds one in
 * cap__io_call). A record lives on
 * the waiting thread's stack and is linked into one list of one descriptor
 * record (cap__fd) under that record's lock.
 *
 * Two sorts:
 *  - exclusive (group == NULL): a thread that will consume what it waits
 *    for (read, accept). An event wakes the first one only, so a thousand
 *    threads in accept() cost one wake-up per connection; the woken one
 *    passes readiness on (cap__io_handoff) if more is left.
 *  - observer (group != NULL): one of several records of a poll()/select()
 *    call. An event wakes every observer; each group wakes its thread once.
 *    A group has its own lock, taken after a descriptor's lock (never the
 *    reverse), and its thread parks on it, so a waker never sees a
 *    half-parked thread (park.h).
 */
#ifndef CAP_IO_WAIT_H
#define CAP_IO_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "io/fd.h"
#include "util/spin.h"

struct cap__thread;

typedef struct cap__io_group {
    cap__spin lock;
    struct cap__thread *thread;
    bool fired;   /* [lock] an event or close reached one of its records */
    bool parked;  /* [lock] the thread is (about to be) parked on it */
    uint64_t woke; /* [lock] CAP__SIG_WOKEN once an event fired it, else 0; the
                      thread replaces it with cap__sig_count() as it resumes
                      (io/sigintr.h, "Ordering") */
} cap__io_group;

typedef struct cap__io_waiter {
    struct cap__io_waiter *next, *prev;
    struct cap__thread *thread;  /* exclusive waiters */
    cap__io_group *group;        /* observers */
    int result;                  /* set by the waker: 0, EBADF on close, EINTR */
    uint64_t woke;               /* [fd lock] CAP__SIG_WOKEN once an event (result 0)
                                    or a close (EBADF) woke it, else 0; then, written by its thread
                                    as it resumes (atomic, io/wait.c),
                                    cap__sig_count() (io/sigintr.h, "Ordering") */
    int dir;
    int fd;                      /* observers: the descriptor it is linked on */
    short events;                /* observers: the pollfd's events (a level
                                    backend asks the kernel for just these) */
    bool linked;                 /* [fd lock] */
} cap__io_waiter;

/* Wakes every observer of direction d of f and its first exclusive waiter
 * still waiting (all of them if all); caller holds f->lock. */
void cap__io_wake_dir_locked(cap__fd *f, int d, int result, bool all);
/* Wakes every waiter of f in both directions with result; caller holds
 * f->lock. */
void cap__io_wake_all_locked(cap__fd *f, int result);
/* The poll events f's waiters ask for: each observer's (its pollfd's
 * events), POLLIN | POLLPRI | POLLRDHUP for an exclusive reader, POLLOUT
 * for a writer. What a level-triggered wait must ask the kernel for, no
 * more: a readiness nobody asked for would end it at once, every time,
 * while it lasts (a poll() for POLLPRI alone on unread data). With more
 * than 16 observers in a direction, that direction's usual events (an
 * exclusive waiter's): the list is not walked further. Caller holds
 * f->lock. */
short cap__io_waited_events(const cap__fd *f);
/* Whether f has a waiter or observer in either direction; without the
 * lock, so only where nothing can link one meanwhile (a fork's child). */
bool cap__io_has_waiters(const cap__fd *f);

#endif /* CAP_IO_WAIT_H */

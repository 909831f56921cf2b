/* SPDX-License-Identifier: MIT */
/*
 * How an idle worker sleeps, and how others wake it. This is the seam the
 * I/O layer plugs into: today the only poller parks the kernel thread on a
 * futex; the epoll/io_uring backends replace it with one that waits in
 * epoll_wait / io_uring_enter (and uses an eventfd for wake), so an idle
 * worker sleeps on timers, I/O and wake-ups at once.
 *
 * Contract:
 *  - wait(w, deadline): block the calling worker's kernel thread until
 *    wake(w) is called, the absolute CLOCK_MONOTONIC deadline passes
 *    (CAP__FOREVER: none), or I/O it watches is ready. Spurious returns
 *    are allowed. Only w's own kernel thread calls it.
 *  - wake(w): make a current or the next wait(w) return promptly. Any
 *    kernel thread may call it, at any time.
 *  - poll(w, idle): non-blocking check for ready I/O, called by a busy
 *    worker every few scheduling rounds, and by an idle one before its
 *    spin (idle true: w is about to spin and wait itself, which may spare
 *    waking another to watch I/O in its place). May be NULL.
 *  - idle_end(w): called when w, after at least one idle() with nothing
 *    to run, is about to run a thread again: a backend whose instance an
 *    idle worker holds for the others makes sure one still does (w may
 *    have let go of it, and found work by a way other than its harvest).
 *    May be NULL.
 *  - pending(): true while some I/O wait could still wake a thread (the
 *    deadlock detector must not fire then; busy workers skip poll() when
 *    it is false). Must count submissions not yet flushed. May be NULL.
 *  - spin(w): called on every round of w's idle spin; takes completions
 *    that need no system call to see (w's own disk ring) and returns true
 *    if it made threads runnable. Must be cheap. May be NULL. It may
 *    silence notifications that only w's spin needs (the ring's eventfd)
 *    until spin_end.
 *  - spin_end(w): called once when an idle spin of at least one round
 *    ends, whether it found work or w is about to sleep: turns back on
 *    what spin silenced, then takes what completed meanwhile (which
 *    nobody was told about); true if that made threads runnable. May be
 *    NULL.
 *  - spin_awaits(w): true while w has work of its own in flight whose
 *    end spin(w) sees (its disk requests): w then spins for it by time,
 *    even as the only worker (worker.c, OWN_SPIN_NS). May be NULL.
 *  - spin_ok(): false while the CPU an idle worker would spin on is
 *    better left to kernel threads working for user threads (the offload
 *    pool): the worker then sleeps at once. May be NULL (always spin).
 */
#ifndef CAP_SCHED_POLLER_H
#define CAP_SCHED_POLLER_H

#include <stdbool.h>
#include <stdint.h>

struct cap__worker;

typedef struct cap__poller {
    const char *name;
    void (*wait)(struct cap__worker *w, uint64_t deadline);
    void (*wake)(struct cap__worker *w);
    void (*poll)(struct cap__worker *w, bool idle);
    void (*idle_end)(struct cap__worker *w);
    bool (*pending)(void);
    bool (*spin)(struct cap__worker *w);
    bool (*spin_end)(struct cap__worker *w);
    bool (*spin_awaits)(struct cap__worker *w);
    bool (*spin_ok)(void);
} cap__poller;

extern __attribute__((visibility("hidden"))) const cap__poller cap__poller_futex;
extern __attribute__((visibility("hidden"))) const cap__poller *cap__poller_active;

#endif /* CAP_SCHED_POLLER_H */

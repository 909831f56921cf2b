/* SPDX-License-Identifier: MIT */
/*
 * The descriptor-readiness backend contract (CAP_NETIO). One backend is
 * chosen at start-up (io/start.c) and reached through cap__netio_active;
 * each is one file: netio_epoll.c (default), netio_poll.c, netio_uring.c.
 *
 * A backend turns kernel readiness into calls of cap__io_ready(fd, gen,
 * dirs) (io/wait.c), which bumps the descriptor's event sequence and wakes
 * its waiters. It also provides the cap__poller (sched/poller.h) through
 * which idle workers sleep: in the backend's kernel wait, until I/O, the
 * worker's next timer or a wake-up, whichever comes first. Only one worker
 * at a time waits in a shared backend instance; the others sleep on their
 * futex and are handed the instance when its holder goes busy.
 *
 *  - edge: every armed descriptor reports each new readiness whether or
 *    not anyone waits on it (epoll, uring), so an unchanged seq proves
 *    that nothing arrived (fd.h, drained sockets); false where only
 *    descriptors with waiters are watched (poll).
 *  - close_releases: closing the last reference to a file ends its
 *    registration (epoll), so disarm() may be skipped for a descriptor
 *    known to be that last reference (fd.h, sole sockets); false where a
 *    registration holds a reference of its own (a uring poll) or lives
 *    in the backend's own table (poll).
 *  - start(): create the instance. 0 or -errno (the caller reports it).
 *  - forget(): in a fork's child (io/start.c), before start() makes the
 *    child's own instance: the parent's, which the child inherited and
 *    shares with it, is let go of in the child only: its descriptors
 *    closed and its ring unmapped, with no call that changes the shared
 *    instance (no epoll_ctl, no submission). Otherwise the child keeps
 *    it alive (a uring poll's file with it) and each generation of
 *    children holds one more. May be NULL.
 *  - arm(f, fd, gen): make readiness of fd in both directions reach
 *    cap__io_ready, edge-style, from now on, stamped with gen, starting
 *    with the readiness it has already (an edge backend: io.h's drained
 *    sockets park before they are registered, on this). Called once
 *    per life of a descriptor, the first time a thread must wait on it,
 *    with f->lock held and gen still f's life (io/wait.c).
 *    0, or -EPERM when the kernel cannot poll this kind of file.
 *  - disarm(f, fd, gen): fd's life gen is ending (it is about to be
 *    closed or reused); stop watching it. Called only for an armed
 *    descriptor, with f->lock held, in the same hold that moves f->gen
 *    past gen. As arm() runs under that lock for a current gen (and a
 *    backend's own re-arm must too), each registration for gen is made
 *    before its removal or not at all: none outlives the life (a uring
 *    poll would hold the file open; a poll entry would stay).
 *  - release(f, fd): after a disarm for a close (io/fd.c,
 *    cap__fd_closing), with no lock held, before the close system call:
 *    returns once no wait of the backend in progress holds a reference
 *    to the file, so that the close is the file's last reference when
 *    the program's was, as on NPTL (the peer sees the FIN or reset, a
 *    pipe's reader its EOF, when close returns). May be NULL: epoll
 *    holds none; poll(2) holds one on every file of a ppoll in
 *    progress (netio_poll.c), a uring poll one until the kernel thread
 *    that submitted it has ended it (netio_uring.c).
 *  - interest(f, fd): a waiter was just linked on f. May be NULL (edge
 *    backends watch every armed descriptor all the time).
 *  - harvest(timeout_ns): wait up to timeout_ns (< 0: no limit, 0: just
 *    look) for readiness and pass it to cap__io_ready. Only the worker
 *    that holds the instance (io/idle.c) calls it.
 *  - kick(): make a harvest in progress return promptly (any thread).
 *  - wait_fd(): a descriptor of the instance that polls readable when a
 *    harvest would find something (a kick included), so its holder can
 *    wait for it elsewhere (in a disk ring, io/idle.c); -1 or NULL: none.
 *  - exec_begin(), exec_failed(): around an exec of this process
 *    (cap__io_exec_begin, io/io.h): let go of the files of close-on-exec
 *    descriptors that the exec would otherwise leave open for a while
 *    (uring: polls armed by other kernel threads, which Linux cancels only
 *    later), and watch them again if the exec failed. May be NULL.
 *  - at_exit(): the process is ending by exit() (cap__io_at_exit, after
 *    the program's destructors): end every wait of the backend that
 *    holds a reference to a file, so that the files close with the
 *    process, before it can be reaped, as on NPTL (a uring poll held its
 *    socket open until the kernel ended the dead ring's requests, after
 *    the parent had reaped the process: its port could not be bound
 *    again yet). True if it did, and so watches none of the program's
 *    descriptors from then on (the runtime's own, CAP__FDF_INTERNAL, it
 *    watches on): cap__io_at_exit then makes every registered one
 *    unpollable and wakes its waiters, which wait in poll(2) on their
 *    worker (code that runs later in the exit may still wake them).
 *    May be NULL: epoll holds no reference, and poll's ppoll lets go
 *    when its kernel thread ends. The exit step takes each lock with
 *    cap__spin_lock_within(CAP__EXIT_LOCK_NS): a handler that calls
 *    exit() may have interrupted its own kernel thread holding one (in
 *    a submission, or a descriptor's), which then never lets go; any
 *    other holder lets go within microseconds.
 * The idle/busy integration with the worker loop, the same for every
 * backend, is cap__poller_netio (io/idle.c), built on these two.
 */
#ifndef CAP_IO_NETIO_H
#define CAP_IO_NETIO_H

#include <stdbool.h>
#include <stdint.h>

#include "io/fd.h"
#include "sched/poller.h"

typedef struct cap__netio {
    const char *name;
    bool edge;
    bool close_releases;
    int (*start)(void);
    void (*forget)(void);
    int (*arm)(cap__fd *f, int fd, uint32_t gen);
    void (*disarm)(cap__fd *f, int fd, uint32_t gen);
    void (*release)(cap__fd *f, int fd);
    void (*interest)(cap__fd *f, int fd);
    void (*harvest)(int64_t timeout_ns);
    void (*kick)(void);
    int (*wait_fd)(void);
    bool (*at_exit)(void);
    void (*exec_begin)(void);
    void (*exec_failed)(void);
} cap__netio;

enum { CAP__EXIT_LOCK_NS = 10000000 };

/* The poller every descriptor backend runs under (io/idle.c). */
extern __attribute__((visibility("hidden"))) const cap__poller cap__poller_netio;

extern __attribute__((visibility("hidden"))) const cap__netio cap__netio_epoll;
extern __attribute__((visibility("hidden"))) const cap__netio cap__netio_poll;
extern __attribute__((visibility("hidden"))) const cap__netio cap__netio_uring;
extern __attribute__((visibility("hidden"))) const cap__netio *cap__netio_active;

/* For the backends whose registration accepts any file (uring, poll):
 * whether the kernel can wait on fd's file at all (io/pollable.c). start
 * makes the scratch instance once (0 or -errno); pollable is false only
 * for a file that has no readiness to wait for (arm then says -EPERM). */
int cap__netio_probe_start(void);
/* A fork's child's forget(): the scratch instance is the parent's too (one
 * number probed in both at once would collide): closed in the child, and
 * made again by the next probe_start. */
void cap__netio_probe_forget(void);
bool cap__netio_pollable(const cap__fd *f, int fd);

/* Readiness of fd (life gen) in the directions of dirs (CAP__IO_RBIT,
 * CAP__IO_WBIT): wakes waiters. Stale gens are ignored. Any kernel thread;
 * takes the descriptor's lock. */
void cap__io_ready(int fd, uint32_t gen, unsigned dirs);

/* Shared by the backends: the idle protocol around a shared instance.
 * See io/idle.c. */
struct cap__worker;
/* Try to become the one worker that waits in the shared instance. */
bool cap__idle_acquire(struct cap__worker *w);
/* In a fork's child: no worker holds or sleeps in an instance. */
void cap__idle_forked(void);
/* Stop being it; hands the instance to a futex-sleeping worker if this
 * one is about to run threads. */
void cap__idle_release(struct cap__worker *w);
/* w leaves idle to run threads without the instance (poller.h,
 * idle_end): wakes a sleeper to hold it if nobody does while threads
 * wait on descriptors. */
void cap__idle_end(struct cap__worker *w);
/* The futex sleep of a worker that did not get the instance. */
void cap__idle_futex_wait(struct cap__worker *w, uint64_t deadline);
/* Wakes w wherever it sleeps; kick() interrupts the instance's wait. */
void cap__idle_wake(struct cap__worker *w, void (*kick)(void));
/* True while w is the instance holder and has not been asked to wake. */
bool cap__idle_should_block(struct cap__worker *w);
/* Submits the disk requests w batched (io/disk.c); every backend calls it
 * before w sleeps or polls. */
void cap__disk_flush(struct cap__worker *w);
/* The disk backend's part of the idle protocol (diskio.h): reap w's own
 * completions while it spins (and, once the spin ends, what completed
 * unannounced during it); say whether it has such completions to wait
 * for; wait in w's own queue while it has requests in flight (prepare,
 * then always wait, which blocks only if block and returns whether
 * inst_fd polled readable); wake such a wait. cap__disk_spin,
 * cap__disk_spin_end, cap__disk_spin_awaits and cap__disk_wait_prepare
 * return false where the backend has no such thing. */
bool cap__disk_spin(struct cap__worker *w);
bool cap__disk_spin_end(struct cap__worker *w);
bool cap__disk_spin_awaits(struct cap__worker *w);
bool cap__disk_wait_prepare(struct cap__worker *w, int inst_fd);
bool cap__disk_wait(struct cap__worker *w, uint64_t deadline, bool block);
void cap__disk_wake(struct cap__worker *w);
/* Relative timeout in ns from an absolute deadline (clamped at 0);
 * -1 for CAP__FOREVER. */
int64_t cap__idle_timeout_ns(uint64_t deadline);

#endif /* CAP_IO_NETIO_H */

/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libc-named wrappers of src/intercept/.
 *
 * The shared library defines read, write, accept, poll, ... (listed in
 * src/exports.map). Called on a user thread, a wrapper goes through the
 * io layer: try the call without blocking, park on EAGAIN. Called on any
 * other kernel thread (the library's own offload threads, an
 * application's own pthreads, code running before start-up), and inside
 * a signal handler of the program on any thread (util/sigctx.h), it forwards
 * to the next definition of the name, normally libc's, found with
 * dlsym(RTLD_NEXT) (CAP__REAL) — with one exception: a socket the runtime
 * created (and made non-blocking) that the application believes blocking
 * gets its blocking behaviour back with poll(2) (cap__ic_foreign_wait;
 * in a handler that may wait as its thread, a park: util/sigctx.h).
 *
 * Inside the library only raw system calls or CAP__REAL are used for
 * these names: calling `read` here would come back into the wrapper.
 *
 * glibc calls its internal aliases (printf -> __write), so stdio never
 * enters these wrappers: the stdio calls themselves are wrapped instead
 * (stdin.c, stdout.c), and park with the FILE lock released (DESIGN.md,
 * Hazard).
 */
#ifndef CAP_INTERCEPT_INTERCEPT_H
#define CAP_INTERCEPT_INTERCEPT_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "arch/ownedxfer.h"
#include "arch/syscall.h"
#include "io/fd.h"
#include "io/sigintr.h"
#include "io/sigsafe.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "sync/cancel.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/sigctx.h"

/* The next definition of name after this library (libc's); dies with a
 * message if there is none. */
void *cap__real_sym(const char *name);

/* Whether the library's wrappers are what the program's calls reach:
 * false if the shared library comes after libc in the program's symbol
 * search order. */
bool cap__ic_interposed(void);
/* Stops the program (exit status 2) with a message saying why the
 * library comes after libc and how to link it instead; `what` is what it
 * cannot do (start, or a call of the program's). */
_Noreturn void cap__ic_order_refuse(const char *what);

/* At start-up (runtime/init.c): makes sched_yield the kernel's once
 * exit() has begun (intercept/yield.c). */
void cap__ic_yield_start(void);

/* At exit, after the program's destructors (runtime/init.c): writes out
 * the bytes buffered in the streams over pipes, sockets and terminals
 * through the write wrapper, before glibc's own unlocked, blocking
 * writing of them (intercept/stdout.c). */
void cap__ic_stdout_exit_flush(void);

/* Sets errno, for a function that read or wrote it before it parked:
 * glibc's __errno_location is declared const, so a compiler may keep the
 * address it returned then, the errno of the worker the thread ran on
 * before. Out of line (noipa), this asks again. */
void cap__ic_set_errno(int e);
/* Reads errno out of line (noipa), so that a function that reads it and
 * then may park keeps no address of it for a write after the park. */
int cap__ic_errno(void);

/* A cached pointer to the next definition of fn, of fn's own type. */
#define CAP__REAL(fn)                                                              \
    ({                                                                             \
        static __typeof__(&fn) real_;                                              \
        __typeof__(&fn) p_ = __atomic_load_n(&real_, __ATOMIC_RELAXED);            \
        if (p_ == NULL) {                                                          \
            p_ = (__typeof__(&fn))cap__real_sym(#fn);                              \
            __atomic_store_n(&real_, p_, __ATOMIC_RELAXED);                        \
        }                                                                          \
        p_;                                                                        \
    })

static inline bool cap__ic_user(void)
{
    return cap__current() != NULL && !cap__in_signal_handler();
}

/*
 * Cancellation points (src/sync/cancel.h; the list is in
 * docs/pthread-compat.md). A wrapper that is one calls cap__ic_enter()
 * where others call cap__ic_user(): on a user thread with a cancel
 * pending (and cancellation enabled) it acts before the call does
 * anything; otherwise it costs the loads of cap__cancel_requested. Its
 * waits pass an in with cancel set (cap__ic_intr_cancel), so a cancel
 * ends them with -ECANCELED once every waiter record is unlinked; the
 * wrapper frees what it holds and returns through cap__ic_ret_cancel,
 * which acts. A call that transferred data before the cancel returns the
 * transfer instead, and the request waits for the next point.
 */
static inline bool cap__ic_enter(void)
{
    cap__thread *self = cap__current();
    if (self == NULL || cap__in_signal_handler())
        return false;
    if (__builtin_expect(cap__cancel_requested(self), 0))
        cap__cancel_act();
    return true;
}

/* The single place -errno becomes -1 with errno set. */
static inline ssize_t cap__ic_ret(ssize_t r)
{
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

/* Raw system call result as >= 0 or -errno. */
static inline long cap__ic_sys(long r)
{
    return r < 0 ? -errno : r;
}

/* True if fd is a socket we made non-blocking while the application
 * believes it blocking. */
bool cap__ic_emulated(int fd);
/* On a thread we do not run: waits in poll(2) until fd is ready in dir or
 * its SO_RCVTIMEO/SO_SNDTIMEO passes. 0, -EAGAIN on timeout, or -EINTR
 * when a signal handler interrupted the wait that the kernel's call would
 * have ended with EINTR (one without SA_RESTART; any with a timeout). */
int cap__ic_foreign_wait(int fd, int dir);

/* In a handler that may wait as its thread (util/sigctx.h): cap__io_poll
 * as that thread, parked until a descriptor is ready or the absolute
 * deadline (n 0: a sleep), neither interrupted by signals (they wait for
 * the handler's mask, or for the wait's end) nor a cancellation point;
 * true in *lifted. Anywhere else nothing is done and *lifted is false. */
int cap__ic_lifted_poll(struct pollfd *fds, nfds_t n, uint64_t deadline, bool *lifted);

/* Whether a read with these MSG_ flags never waits on socket fd: one of
 * the error queue (MSG_ERRQUEUE) of a family that keeps one (IP, IPv6,
 * packet), which Linux answers at once, EAGAIN when the queue is empty,
 * blocking socket or not. Other families ignore the flag (rw.c). */
bool cap__ic_errqueue_never_waits(int fd, int flags);

struct msghdr;

/* Before the kernel takes msg (sendmsg, sendmmsg; rw.c): the descriptors
 * it carries to another process (SCM_RIGHTS) are shared from then on: a
 * private pipe among them stops being private (io/pipe.h), a sole socket
 * sole, and an owned one gets back the blocking mode the application
 * believes it has (io/fd.h, cap__fd_shared). Before, not after: the
 * receiver may take a descriptor and read its flags the moment the
 * message is queued, while the sender has not returned (a blocking send
 * parked after its first part, or a sender that is slow to run again);
 * it would take the runtime's O_NONBLOCK for the application's. A send
 * that then fails has given them away for nothing, which costs only the
 * runtime's shortcuts on them. A control buffer that cannot be read is
 * left to the kernel (EFAULT). A parked thread of the pipe that the
 * receiver's transfers would not wake is woken by the escape to try
 * again, and then parks armed. */
void cap__ic_rights_sending(const struct msghdr *msg);

/* The readiness poll(2) reports for fd right now (events plus POLLERR,
 * POLLHUP, POLLNVAL), without waiting; 0 when none or on error, EINTR
 * included (a handler run on this kernel thread fails even a
 * zero-timeout poll so: not a readiness, io/sigintr.h). */
static inline short cap__ic_revents_now(int fd, short events)
{
    struct pollfd p = { .fd = fd, .events = events };
    return cap__sys6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) == 1 ? p.revents : 0;
}

/* How much one send into the blocking socket fd (one the runtime does
 * not own) takes without waiting in the kernel once poll said POLLOUT:
 * a quarter of its send buffer (SO_SNDBUF, in the kernel's own units).
 * POLLOUT means the memory the socket holds is at most a quarter of that
 * buffer for a Unix stream socket, two thirds for TCP (Linux's
 * unix_writable and tcp_poll), and the kernel's send waits only once it
 * holds the whole buffer; so a send of a quarter
 * more finishes at once. (Not covered: TCP_NOTSENT_LOWAT set low, and
 * the system-wide TCP memory limit.) 1 if the buffer cannot be read. */
static inline size_t cap__ic_send_room(int fd)
{
    int sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    if (cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_SNDBUF, (long)&sndbuf, (long)&len, 0) != 0 ||
        sndbuf < 4)
        return 1;
    return (size_t)sndbuf / 4;
}

/* The plain read or write (readv, writev with more than one buffer) of
 * m's vector on fd while the runtime owns it (non-blocking underneath),
 * the ownership test and the call one piece (arch/ownedxfer.h); else
 * CAP__ARCH_NOT_OWNED. A raw result: >= 0 or -errno. */
static inline long cap__ic_owned_rw(cap__fd *f, int fd, bool write, const struct msghdr *m)
{
    if (m->msg_iovlen == 1)
        return cap__arch_owned_xfer(fd, (long)m->msg_iov[0].iov_base, (long)m->msg_iov[0].iov_len,
                                    0, &f->flags, CAP__FDF_OWNED, write ? SYS_write : SYS_read);
    return cap__arch_owned_xfer(fd, (long)m->msg_iov, (long)m->msg_iovlen, 0, &f->flags,
                                CAP__FDF_OWNED, write ? SYS_writev : SYS_readv);
}

/* One transfer that does not wait on a pipe, FIFO, eventfd or other
 * stream the runtime does not own (not non-blocking underneath: never
 * made here, or given back at a fork): RWF_NOWAIT where the file takes
 * it, else readiness first, then the plain call (rw.c). >= 0 or -errno;
 * -EAGAIN where it would wait. */
ssize_t cap__ic_stream_unowned(cap__fd *f, int fd, bool write, const struct msghdr *m);

/* A read (read, readv) of a signalfd our signalfd() made
 * (CAP__FDF_SIGNALFD), f its record: also takes the calling thread's own
 * pending signals of its mask (sigwait.c). >= 0 or -errno. */
ssize_t cap__ic_signalfd_read(cap__fd *f, int fd, struct msghdr *msg, bool nonblock);

/* Drops the first n bytes of msg's vector (the caller's private copy) and
 * its ancillary data, which goes with the first part only (rw.c). */
void cap__ic_msg_advance(struct msghdr *msg, size_t n);

/* What may interrupt a read-like call (signal(7)): a handler without
 * SA_RESTART; any handler once the socket has a timeout (deadline). */
static inline const cap__intr *cap__ic_intr(uint64_t deadline)
{
    return deadline == CAP__FOREVER ? &cap__intr_restart : &cap__intr_always;
}

/* cap__ic_intr for a cancellation point. */
static inline cap__intr cap__ic_intr_cancel(uint64_t deadline)
{
    cap__intr in = *cap__ic_intr(deadline);
    in.cancel = true;
    return in;
}

/* cap__ic_ret at the end of a cancellation point: -ECANCELED from a wait
 * acts (cap__cancel_point re-checks, so an ECANCELED of the system call
 * itself is returned as an error). */
static inline ssize_t cap__ic_ret_cancel(ssize_t r)
{
    if (__builtin_expect(r == -ECANCELED, 0))
        cap__cancel_point();
    return cap__ic_ret(r);
}

/* fd handed to code that reads and writes it through glibc's internal
 * calls (a stdio stream, POSIX AIO's threads): an owned pipe or socket
 * gets back the blocking mode the application believes it has
 * (handover.c). */
void cap__ic_hand_over(int fd);

/* A system call with up to five arguments for the offload pool
 * (offsys.c). */
typedef struct cap__sys_call {
    long nr;
    long a[5];
    long result;
} cap__sys_call;
/* Runs c on the pool, interruptible as in says; >= 0 or -errno. */
long cap__ic_offload_sys(cap__sys_call *c, const cap__intr *in);
/* Whether t is a time the kernel takes, relative or absolute: tv_sec not
 * negative, tv_nsec from 0 to 999,999,999 (else it refuses the call with
 * EINVAL). t must be readable. */
static inline bool cap__ic_timespec_valid(const struct timespec *t)
{
    return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000;
}

/* For a call with a relative timeout of its own made on the pool, where
 * it may start late (queued for a thread) or again (after a stray kick):
 * the CLOCK_MONOTONIC deadline it ends at, taken as the caller makes it
 * (CAP__FOREVER for none, or for one the call refuses, which it is then
 * given as it is), and what is left of it when the call starts. */
static inline uint64_t cap__ic_rel_deadline(const struct timespec *t)
{
    if (t == NULL || !cap__ic_timespec_valid(t))
        return CAP__FOREVER;
    return cap__deadline_after(cap__timeout_ns((uint64_t)t->tv_sec, (uint64_t)t->tv_nsec));
}

static inline struct timespec cap__ic_time_left(uint64_t deadline)
{
    uint64_t now = cap__now();
    return cap__ns_to_timespec(deadline > now ? deadline - now : 0);
}

/* The same for a call with an absolute deadline of its own, its fifth
 * argument, that it passes the kernel as such (mq_timedsend's): still
 * queued for a pool thread at the CLOCK_MONOTONIC deadline, it is made
 * once on the caller's thread with a deadline long gone, which tries it
 * without waiting (io/io.h, cap__offload_call_until). */
long cap__ic_offload_sys_until(cap__sys_call *c, const cap__intr *in, uint64_t deadline);

/* Whether f, a stream descriptor fd, is a terminal: asked of the kernel
 * once per life of the number (CAP__FDF_TTY / CAP__FDF_NOT_TTY). */
bool cap__ic_is_tty(cap__fd *f, int fd);
struct msghdr;
/* A blocking read (readv) or write (writev) of msg's vector on fd, a
 * terminal, on a user thread, by the terminal's rules (ttyio.c); >= 0 or
 * -errno, interruptible as in says. */
ssize_t cap__ic_tty_xfer(cap__fd *f, int fd, bool write, struct msghdr *msg,
                         const cap__intr *in);
/* Before a stdio refill of fd, a terminal: what to wait for. NO_WAIT:
 * the refill's read returns at once (non-canonical, VMIN = 0, VTIME = 0);
 * WAIT: readiness, until *deadline if VMIN = 0 (the end of VTIME: a read
 * then returns 0), else without one; WAIT_THEN_POOL: readiness, then the
 * refill on the offload pool (VMIN and VTIME both set: its read times the
 * gaps between bytes). */
enum { CAP__TTY_IN_NO_WAIT, CAP__TTY_IN_WAIT, CAP__TTY_IN_WAIT_THEN_POOL };
int cap__ic_tty_input_wait(int fd, uint64_t *deadline);

/* The soft RLIMIT_NOFILE, where the kernel's checks of descriptor
 * numbers and counts stop (poll's nfds, select's range, dup2's target);
 * RLIM_INFINITY when there is none or it cannot be read. */
static inline rlim_t cap__ic_nofile_soft(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : RLIM_INFINITY;
}

/* stdio (stdio_turn.c): a closed stream's turn entry goes; in a fork's
 * child, every entry (their calls were lost threads'). */
struct _IO_FILE; /* glibc's FILE */
void cap__stream_turn_forget(struct _IO_FILE *fp);
void cap__stream_turns_forked(void);
/* In a fork's child, after cap__stream_turns_forked forgot the calling
 * thread's holds: the hold of its own locale again, if it has one
 * (libc_tls.c). */
void cap__libc_tls_forked(void);
/* stdio output (stdout.c): fclose's flush, made first where it may park;
 * 0 or EOF (errno set), as fflush. */
int cap__stdio_flush_before_close(struct _IO_FILE *fp);
/* Streams' lives (stdio_turn.c): the flush of every stream made here
 * (fflush(NULL), exit's) walks glibc's list under glibc's lock only to
 * name the streams, then writes each without it, parking; meanwhile no
 * stream may end. So a walk holds a gate shared, and the wrappers that
 * free a stream (fclose, pclose) hold it exclusive while they take the
 * stream out of glibc's list (stream.c) -- but for a stream ended inside
 * a walk by a function the walk called (a cookie stream's write): that
 * one does not wait, and the walk checks each stream is still listed
 * before it flushes it. */
struct cap__stream_walker {
    cap_thread_t thread;
    struct cap__stream_walker *next;
};
void cap__streams_walk_begin(struct cap__stream_walker *w);
void cap__streams_walk_end(struct cap__stream_walker *w);
/* true: the gate was taken, to give back with cap__stream_end_end. */
bool cap__stream_end_begin(void);
void cap__stream_end_end(bool took);
/* glibc's kept mutexes (libc_mutex.c) in a fork's child: the holders
 * table's locks, perhaps held by a lost thread, start free. */
void cap__libc_kept_forked(void);
/* syslog (syslog.c) in a fork's child: its lock starts free (a holder
 * parked in send is not in the child). */
void cap__syslog_forked(void);
/* Before a user thread's close of fd, whose record f has
 * CAP__FDF_LINGER: the wait a TCP socket's SO_LINGER timeout asks for,
 * parked instead of in the kernel (linger.c). The close path tests the
 * flag itself, so other closes make no call. */
void cap__ic_linger_before_close(int fd, cap__fd *f);
/* A user thread's close of fd (record f, or NULL) that may wait in the
 * kernel for SO_LINGER's timeout where cap__ic_linger_before_close could
 * not make the wait (a socket not sole): made on the
 * offload pool, true, and close's return value in *result; false for
 * every other close, which the caller makes (linger.c). */
bool cap__ic_close_lingering(int fd, cap__fd *f, int *result);
/* The same for the close a dup2 or dup3 makes of newfd (record f, or
 * NULL): the dup made on the pool, true, and its raw result (newfd or
 * -errno) in *result; false when the caller makes it. */
bool cap__ic_dup_lingering(int oldfd, int newfd, int flags, cap__fd *f, long *result);
/* Before a user thread's close_range of first..last (not CLOSE_RANGE_
 * CLOEXEC): each socket there whose close may linger gets close()'s
 * treatment first: a sole one the parked wait (lingering then off, so
 * the range's close is quick), any other that lingers its close on the
 * pool, now. */
void cap__ic_linger_before_close_range(unsigned first, unsigned last);
/* close()'s first step, before a close made inside another call (glibc's
 * fclose or freopen of a stream over fd, -1 for none; close_range): on a
 * user thread, the parked wait of a sole socket that lingers (then off);
 * true if the close would still wait in the kernel (a socket not sole
 * that lingers), for the caller to make it on the pool. */
bool cap__ic_linger_first(int fd);
/* Whether path names a FIFO (a stat, as the open wrapper makes): opening
 * one waits for its other end (fopen.c). */
bool cap__ic_is_fifo(const char *path);

/* The application's O_NONBLOCK view of a classified descriptor. */
static inline bool cap__ic_nonblock(const cap__fd *f)
{
    return cap__fd_has(f, CAP__FDF_APP_NONBLOCK);
}

#endif /* CAP_INTERCEPT_INTERCEPT_H */

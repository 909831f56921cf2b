/* SPDX-License-Identifier: MIT */
/*
 * The descriptor table: what the runtime knows about each file descriptor
 * number, indexed by the number itself (the netpoller pattern: one record
 * per descriptor, registered with the backend once, with reader and writer
 * waiters hanging off it).
 *
 * Records live in chunks that are allocated on first use and never freed,
 * so a lookup is two loads and never races with reclamation. A record
 * outlives the descriptor it describes; `gen` tells lives apart:
 *  - every close the runtime sees (close, dup2/dup3 onto it, close_range,
 *    closefrom, and the stdio/dirent closes of intercept/stream.c) and
 *    every descriptor the runtime creates bumps gen,
 *    wakes waiters with EBADF and forgets kind, flags and registration
 *    (and a terminal's private description: io/ttyfile.h);
 *  - a close does it in two steps around its system call: before it,
 *    cap__fd_closing bumps gen and wakes the waiters but keeps kind and
 *    flags (CAP__FDF_CLOSING marks them); after it, cap__fd_closed
 *    forgets them (bumping gen again, so a thread that parked in between
 *    wakes with EBADF). A call racing the close on another worker thus
 *    sees the descriptor as it still is until the number is really
 *    closed. Forgotten while still open, the record would be classified
 *    from the kernel, which reports the O_NONBLOCK the runtime set on its
 *    own sockets as the application's: a blocking accept() racing
 *    close() returned EAGAIN, and fcntl(F_GETFL) reported O_NONBLOCK.
 *    Kept after the system call, it would describe the closed file to a
 *    thread on another worker that got the number at once from an open
 *    we do not see (a raw openat2, as Knot's): a read of that file went
 *    to recv and failed with ENOTSOCK. So a call that finds a close under
 *    way waits for it to end (cap__fd_classify, F_GETFL): the call then
 *    acts as if it came after the close (a dup of such a number copies
 *    what the record says without waiting: fd.c, cap__fd_dup_of). The wait is the closing
 *    thread's system call, or a pclose's wait for its child; a user
 *    thread yields meanwhile, and a signal handler does not wait (the
 *    closer may be the thread it interrupted);
 *  - a backend stamps each registration with the gen it was made for and
 *    delivers (fd, gen) with every event; an event whose gen is no longer
 *    current is dropped, so a reused descriptor number never receives a
 *    stale event.
 *
 * What is unknown is learnt lazily: kind (fstat) and the application's
 * O_NONBLOCK view (F_GETFL) on first use. Descriptors created by paths we
 * do not see (glibc internals) and closed by paths we do not see keep
 * their record at "unknown", which is correct; one created by us and
 * closed behind our back (a raw close system call) is the documented
 * blind spot, as are raw transfers on a private pipe (io/pipe.h).
 *
 * Drained sockets: on a TCP socket (CAP__FDF_DRAINS) a read that returns
 * less than it asked for, or EAGAIN, leaves the receive queue empty, and
 * with an edge backend every byte that arrives after that brings an event
 * that bumps seq[READ]. So while (gen, seq[READ]) still equals what a
 * thread snapshotted before such a read, the next blocking read may park
 * at once instead of making a call that would say EAGAIN (io/wait.c).
 * A socket fresh from accept starts so, from its first snapshot
 * (cap__io_fresh_drained, io.h): the registration its first park makes
 * reports what was queued before.
 * TCP reads also stop short at an urgent mark and at a FIN, and before a
 * pending error: each of these is set before the wake-up that announces
 * it and shows in the readiness the backend then reports (POLLPRI,
 * POLLRDHUP, POLLHUP, POLLERR), which marks the socket CAP__FDF_NODRAIN
 * for the rest of its life before the seq bump that publishes the event;
 * an event not yet harvested still bumps seq later. Not for other
 * sockets: a Unix stream read stops short before a message that carries
 * descriptors or other credentials, kTLS (TCP_ULP) at a record of
 * another type.
 *
 * Sole sockets (CAP__FDF_SOLE): a socket the runtime made (socket,
 * socketpair, accept, accept4) whose open file description this number
 * is still the only reference to: never duplicated (dup, dup2, dup3,
 * F_DUPFD, F_DUPFD_CLOEXEC), sent (SCM_RIGHTS) or inherited (fork,
 * posix_spawn) since. Its close releases the file, and with it the
 * file's epoll registration, so a backend whose registrations end that
 * way (cap__netio.close_releases) is not asked to disarm it: one
 * epoll_ctl less per connection. The flag is cleared by every such
 * witness through the wrappers (cap__fd_shared) and never set again in
 * that life. What the wrappers do not see (vfork, raw clone, glibc's own
 * spawns in system and popen, pidfd_getfd from another process, an
 * io_uring of the application holding the file) may leave a
 * registration behind the close; it then reports the old gen, so its
 * events are dropped as stale like any other (above), and it lives until
 * the last other reference closes. The same holds for a close racing a
 * fork on another worker.
 *
 * Dups share one view (CAP__FDF_DUPED): O_NONBLOCK and O_DIRECT belong to
 * the open file, not to the number, but the application's view of them is
 * kept per record (the runtime's own files are non-blocking underneath,
 * so the kernel cannot tell). A dup (dup, dup2, dup3, F_DUPFD,
 * F_DUPFD_CLOEXEC) marks both records, and a change of the view through
 * one number of a marked record (F_SETFL, FIONBIO: cap__fd_set_view) is
 * made on every marked record of the same open file (kcmp(KCMP_FILE);
 * where that is refused, same inode and access mode). The mark stays for
 * the life of the number, even after its dups are closed: the walk then
 * finds no other. Numbers that share the file through paths the wrappers
 * do not see (another process, SCM_RIGHTS received back) are not
 * followed.
 *
 * Locking: `lock` guards the waiter lists and is taken by wakers (backend
 * event processing, close) and by waiters linking themselves (park.h's
 * protocol). `gen`, `flags`, `kind`, `seq` are atomics readable without it.
 */
#ifndef CAP_IO_FD_H
#define CAP_IO_FD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"
#include "util/spin.h"

struct cap__io_waiter;

enum cap__fd_kind {
    CAP__FD_UNKNOWN = 0, /* not classified yet */
    CAP__FD_SOCKET,      /* pollable; MSG_DONTWAIT works */
    CAP__FD_STREAM,      /* pollable non-socket: pipe, fifo, tty, eventfd... */
    CAP__FD_FILE,        /* regular file, block device, directory: disk path */
    CAP__FD_BAD,         /* fstat failed: not open */
};

enum {
    CAP__FDF_OWNED = 1u << 0,          /* we created it and set O_NONBLOCK on it */
    CAP__FDF_APP_NONBLOCK = 1u << 1,   /* the application's view of O_NONBLOCK */
    CAP__FDF_REGISTERED = 1u << 2,     /* armed in the netio backend for this gen */
    CAP__FDF_NOWAIT_BAD_RD = 1u << 3,  /* RWF_NOWAIT refused for reads: readiness, then call */
    CAP__FDF_STREAM_SOCK = 1u << 4,    /* SOCK_STREAM: blocking writes write everything */
    CAP__FDF_INTERNAL = 1u << 5,       /* the runtime's own (eventfds of rings) */
    CAP__FDF_UNPOLLABLE = 1u << 6,     /* the backend refused it (EPERM) */
    CAP__FDF_DIRECT = 1u << 7,         /* O_DIRECT: the disk path skips the page-cache try */
    CAP__FDF_DISK_HOT = 1u << 8,       /* reads have kept hitting the page cache (disk.c) */
    CAP__FDF_DRAINS = 1u << 9,         /* TCP: a short read empties it (`drained` below) */
    CAP__FDF_NODRAIN = 1u << 10,       /* urgent data, hang-up or error seen: see above */
    CAP__FDF_PIPE = 1u << 11,          /* an end of a pipe we made: seq bumps are locked adds */
    CAP__FDF_LOCAL = 1u << 12,         /*   and the pipe is private, never armed (io/pipe.h) */
    CAP__FDF_WAITED = 1u << 13,        /*   a thread parked on this end while private */
    CAP__FDF_SOLE = 1u << 14,          /* a socket we made, its file's only reference: below */
    CAP__FDF_TIMEO = 1u << 15,         /* timeo[] may be non-zero (cap__fd_set_timeo) */
    CAP__FDF_CLOSING = 1u << 16,       /* a close is under way: see above */
    CAP__FDF_DUPED = 1u << 17,         /* its file has had other numbers here: below */
    CAP__FDF_NOWAIT_BAD_WR = 1u << 18, /* the same for writes (eventfds take it for reads) */
    CAP__FDF_LOWAT = 1u << 19,         /* SO_RCVLOWAT above 1: reads wait for it (rw.c) */
    CAP__FDF_WR_CHECKED = 1u << 20,    /* a file: WR_INLINE below has been decided (disk.c) */
    CAP__FDF_WR_INLINE = 1u << 21,     /*   buffered writes are made on the worker */
    CAP__FDF_WR_SLOW = 1u << 22,       /*   and one of them blocked: the backend for a while */
    CAP__FDF_NOT_PIPE = 1u << 23,      /* tee(2) refused it: no writer-less check (fifo.h) */
    CAP__FDF_FORKED = 1u << 24,        /* owned, and a child process holds its file too:
                                          cap__fd_exec leaves its mode */
    CAP__FDF_SIGNALFD = 1u << 25,      /* made by our signalfd(): reads take the reading
                                          thread's own pending signals too (sigwait.c) */
    CAP__FDF_SIGEPOLL = 1u << 26,      /* an epoll set a signalfd of ours was added to
                                          (epoll_ctl): its waits see the waiting thread's
                                          own pending signals too (io/sigfd.h) */
    CAP__FDF_TTY = 1u << 27,           /* a terminal: blocking transfers follow its rules
                                          (intercept/ttyio.c) */
    CAP__FDF_NOT_TTY = 1u << 28,       /* a stream found not to be a terminal */
    CAP__FDF_FIFO = 1u << 29,          /* a pipe or FIFO we did not make that refuses
                                          RWF_NOWAIT: blocking transfers through a
                                          private description (io/ttyfile.h), else
                                          writes in PIPE_BUF pieces (intercept/rw.c) */
    CAP__FDF_TTY_POOL = 1u << 30,      /* a terminal or FIFO that gets no private
                                          description (io/ttyfile.h): a terminal's
                                          blocking writes on the pool, a FIFO's in
                                          PIPE_BUF pieces after readiness */
    CAP__FDF_LINGER = 1u << 31,        /* SO_LINGER set with a timeout through the
                                          wrapper: a close may wait (intercept/linger.c) */
};

enum { CAP__IO_READ = 0, CAP__IO_WRITE = 1 };
#define CAP__IO_RBIT (1u << CAP__IO_READ)
#define CAP__IO_WBIT (1u << CAP__IO_WRITE)
/* With CAP__IO_RBIT in cap__io_ready: the kernel reported urgent data, a
 * hang-up or an error, which ends the drained-socket shortcut for this
 * life (above). */
#define CAP__IO_NODRAIN (1u << 2)

/* The record is 128 bytes, two cache lines: what a transfer, a park and
 * a wake-up on a socket touch is on the first (up to tail[]); `observed`
 * and CAP__FDF_TIMEO say when the second (obs[], timeo[]) must be read. */
typedef struct cap__fd {
    cap__spin lock;
    _Atomic uint32_t gen;                /* life of this number, see above */
    _Atomic uint32_t flags;              /* CAP__FDF_* */
    _Atomic uint8_t kind;                /* enum cap__fd_kind */
    _Atomic uint8_t deferred;            /* [lock] this life was begun by a signal
                                          * handler's queued change (fdsig.c), from gen - 1 */
    uint8_t observed;                    /* [lock] bit d: obs[d] is not empty */
    _Atomic uint8_t owned_calls;         /* a socket's owned calls were made: see
                                          * cap__fd_owned_call */
    _Atomic uint32_t seq[2];             /* events seen, per direction */
    _Atomic uint64_t drained;            /* (gen << 32 | seq[READ]) + 1 of a read that found
                                          * it empty (see above); 0: none */
    struct cap__io_waiter *head[2];      /* [lock] FIFO of exclusive waiters */
    struct cap__io_waiter *tail[2];      /*   (read, write, accept...) per direction */
    struct cap__io_waiter *obs[2];       /* [lock] observers (poll, select) */
    _Atomic uint64_t timeo[2];           /* SO_RCVTIMEO / SO_SNDTIMEO in ns, 0: none */
    void (*internal)(void *arg);         /* CAP__FDF_INTERNAL: called on readiness */
    void *internal_arg;
    uint32_t backend_slot;               /* free for the backend's own use */
    _Atomic uint32_t disk_streak;        /* page-cache hits in a row (disk.c; racy, a hint) */
    _Atomic uint32_t peer;               /* an end of a pipe we made: the other end's fd + 1 */
    _Atomic uint32_t peer_gen;           /*   and its life; 0: none (io/pipe.h) */
} cap__fd;
_Static_assert(sizeof(cap__fd) == 128, "a descriptor record is two cache lines");
_Static_assert(offsetof(cap__fd, tail) + sizeof(((cap__fd *)0)->tail) <= 64,
               "the fields of the request path share the record's first line");

/* Largest descriptor number the table covers (+1). Beyond it calls pass
 * straight through (blocking the worker). */
#define CAP__FD_MAX (1 << 20)

/* The table: chunks of records, allocated on first use (fd.c). The
 * lookups below are inline because every wrapped call makes one or two:
 * out of line they cost a call each on the request path. */
enum {
    CAP__FD_CHUNK_SHIFT = 10,
    CAP__FD_CHUNK_LEN = 1 << CAP__FD_CHUNK_SHIFT,
};
extern __attribute__((visibility("hidden"))) _Atomic(cap__fd *)
    cap__fd_chunks[CAP__FD_MAX >> CAP__FD_CHUNK_SHIFT];

/* cap__fd_get when fd's chunk does not exist yet: allocates it. */
cap__fd *cap__fd_get_slow(int fd);
/* cap__fd_classify of a record whose kind is not known yet, or that a
 * close is under way on. */
int cap__fd_classify_slow(cap__fd *f, int fd);
/* Returns once no close is under way on f (CAP__FDF_CLOSING clear),
 * yielding meanwhile (see above); at once inside a signal handler. */
void cap__fd_wait_closed(cap__fd *f);

/* The record of fd if its chunk exists, else NULL. Never allocates. */
static inline cap__fd *cap__fd_peek(int fd)
{
    if ((unsigned)fd >= CAP__FD_MAX)
        return NULL;
    cap__fd *c = atomic_load_explicit(&cap__fd_chunks[fd >> CAP__FD_CHUNK_SHIFT],
                                      memory_order_acquire);
    return c != NULL ? &c[fd & (CAP__FD_CHUNK_LEN - 1)] : NULL;
}

/* The record of fd, allocating its chunk; NULL if fd is out of range or
 * memory ran out. */
static inline cap__fd *cap__fd_get(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (__builtin_expect(f == NULL, 0) && (unsigned)fd < CAP__FD_MAX)
        return cap__fd_get_slow(fd);
    return f;
}

/* Makes sure kind and the application's O_NONBLOCK view are known. Returns
 * the kind (CAP__FD_BAD if the descriptor is not open). A record a close
 * is under way on is first waited for (above). */
static inline int cap__fd_classify(cap__fd *f, int fd)
{
    /* Flags first: a new life stores its kind before its flags (fd.c,
     * end_life_locked), so without CLOSING the kind loaded next is not a
     * closed file's. */
    uint32_t fl = atomic_load_explicit(&f->flags, memory_order_acquire);
    int kind = atomic_load_explicit(&f->kind, memory_order_acquire);
    if (__builtin_expect(kind == CAP__FD_UNKNOWN || (fl & CAP__FDF_CLOSING), 0))
        return cap__fd_classify_slow(f, fd);
    return kind;
}

/* A descriptor the runtime just created for the application: a fresh life
 * with the given kind and flags. */
void cap__fd_created(int fd, int kind, uint32_t flags);
/* Same, inheriting kind, flags and timeouts from another descriptor (dup). */
void cap__fd_dup_of(int newfd, int oldfd);
/* The number is about to stop naming its current file (close, dup2 onto
 * it): disarm it in the backend while the number is still valid, begin a
 * new gen and wake its waiters with EBADF; kind and flags stay (above).
 * The caller then makes the system call and calls cap__fd_closed. */
void cap__fd_closing(int fd);
/* After that system call, whatever it returned: the record forgets kind
 * and flags, unless a new life began meanwhile (the number was reused). */
void cap__fd_closed(int fd);
/* cap__fd_closing and cap__fd_closed for every number from first to last
 * (inclusive) that has a record; skip chunks never touched. */
void cap__fd_closing_range(unsigned first, unsigned last);
void cap__fd_closed_range(unsigned first, unsigned last);
/* After a call that closed descriptors we cannot name beforehand
 * (fcloseall): ends the life of every known number that is no longer
 * open. */
void cap__fd_forget_closed(void);
/* The application changed its open file's O_NONBLOCK or O_DIRECT through
 * fd (F_SETFL, FIONBIO), or its socket's SO_RCVLOWAT: the bits of mask
 * (CAP__FDF_APP_NONBLOCK, CAP__FDF_DIRECT, CAP__FDF_LOWAT) become those
 * of bits on fd's record and on every dup of it (see above). */
void cap__fd_set_view(int fd, uint32_t mask, uint32_t bits);
/* The receive and send timeouts the kernel keeps for socket fd, in ns
 * (0: none; one past 2^64 ns saturates, cap__fd_timeo_ns), by
 * CAP__IO_READ / CAP__IO_WRITE; 0 where it cannot say. */
void cap__fd_kernel_timeouts(int fd, uint64_t timeo[2]);
/* The application set a socket's SO_RCVTIMEO (dir CAP__IO_READ) or
 * SO_SNDTIMEO through fd: ns (0: none) on fd's record and on every dup of
 * it, since the timeouts belong to the socket. */
void cap__fd_set_timeo_file(int fd, int dir, uint64_t ns);
/* The runtime stops owning fd: it gets back the blocking mode the
 * application believes it has (O_NONBLOCK cleared unless the application
 * set it), and transfers on it go back to RWF_NOWAIT / MSG_DONTWAIT. For
 * a descriptor about to be shared with code that does not go through the
 * wrappers (a child process, a stdio stream). No-op if not owned.
 * Async-signal-safe: flags, system calls, and a private pipe's wake-ups
 * left to the dispatch after a handler (io/pipe.h); so are the walks
 * below built on it, for a fork or an exec made by a handler. */
void cap__fd_disown(int fd);
/* cap__fd_disown for fd and every other number of its open file (its
 * dups, found as cap__fd_set_view finds them: O_NONBLOCK belongs to the
 * file, so all of them change). For the rare hand-overs: a socket given
 * to stdio (fdopen, dup2 onto 0, 1 or 2) or sent away (cap__fd_shared). */
void cap__fd_disown_file(int fd);
/* cap__fd_disown for every owned pipe (before a child process is made:
 * it inherits them). */
void cap__fd_disown_pipes(void);
/* Calls fn for every record of the table that exists (chunks not yet
 * allocated are skipped), in descriptor order; _range: only descriptors
 * first..last (last may exceed the table). */
void cap__fd_foreach(void (*fn)(int fd, cap__fd *f, void *arg), void *arg);
void cap__fd_foreach_range(unsigned first, unsigned last,
                           void (*fn)(int fd, cap__fd *f, void *arg), void *arg);
/* Before a child process is made: cap__fd_disown_pipes, and no socket is
 * sole any longer (the child inherits a reference to each). */
void cap__fd_forking(void);
/* Before a child process is made that runs nothing of this program before
 * an exec (posix_spawn, posix_spawnp, popen, system): cap__fd_forking,
 * but an owned pipe, FIFO or eventfd with FD_CLOEXEC stays owned, since
 * the new program never holds it. One that a file action dup2's into
 * the child is given back when the action is added (handover.c). A
 * descriptor whose FD_CLOEXEC another thread clears while this runs may
 * reach the child non-blocking. */
void cap__fd_spawning(void);
/* Before an exec replaces the program: every owned descriptor the new
 * program inherits (no FD_CLOEXEC) gets back the blocking mode the
 * application believes it has, with every number of its file
 * (cap__fd_disown_file), so that the program sees the O_NONBLOCK the
 * application set, as after the kernel's exec. Not one whose file a child
 * process holds too (CAP__FDF_FORKED): that child's runtime, or ours in
 * the parent of a forked child that execs, would then block its worker
 * in an accept or connect on it. If the exec fails, the descriptors stay
 * given back (served as inherited ones are). Also in a signal handler:
 * the give-back takes no lock (the pipes' wake-ups wait for the dispatch
 * after the handler, io/pipe.h). */
void cap__fd_exec(void);
/* fd's file gains a reference the runtime does not track (sent by
 * SCM_RIGHTS): a private pipe falls back (io/pipe.h), a sole socket stops
 * being sole, and an owned socket or pipe is given back its blocking mode
 * with every number of its file (cap__fd_disown_file), since the receiver
 * sees the file's real flags. */
void cap__fd_shared(int fd);

/*
 * Inside a signal handler (util/sigctx.h) the interrupted code may hold a
 * record's lock, a backend's or a run queue's, so the transitions above
 * (and shutdown's wake-ups, the pipe fall-backs) take none there: the
 * system call itself is made at once by the wrapper, and what the table
 * must learn from it is queued (cap__fd_defer, async-signal-safe, with the
 * gen of the record's life the handler saw) and applied by the signal
 * dispatch that follows the handler (cap__fd_run_deferred, io/sigintr.c).
 * A queued change applies only if that life is still current: a life
 * begun meanwhile by a wrapper outside the handler already ended it. Until
 * the dispatch, the record still describes the old life.
 */
enum cap__fd_deferred_op {
    CAP__FDD_LIFE = 1,     /* a new life: kind, flags, timeouts (close: unknown, 0) */
    CAP__FDD_ESCAPE,       /* a private pipe falls back (io/pipe.h) */
    CAP__FDD_RESIZED,      /* cap__pipe_resized */
    CAP__FDD_SHARED,       /* cap__fd_shared */
    CAP__FDD_DISOWN_PIPES, /* cap__fd_disown_pipes (fd unused) */
    CAP__FDD_SHUT_RD,      /* cap__fd_shut_wakes, SHUT_RD + the op's offset */
    CAP__FDD_SHUT_WR,
    CAP__FDD_SHUT_RDWR,
};
void cap__fd_defer(int op, int fd, int kind, uint32_t flags, const uint64_t *timeo);
void cap__fd_run_deferred(void);
/* CAP__FDD_LIFE applied: if fd's life is still gen, or one that another
 * queued change begun from gen (a later change of the same life wins), end
 * it as a close would (pipe fall-back, disarm, waiters woken with EBADF)
 * and begin one with kind, flags and timeo. */
void cap__fd_relife(int fd, uint32_t gen, int kind, uint32_t flags, const uint64_t timeo[2]);
/* After shutdown(fd, how) succeeded: wakes the threads it concerns
 * (intercept/net.c). Deferred inside a handler. */
void cap__fd_shut_wakes(int fd, int how);

static inline bool cap__fd_has(const cap__fd *f, uint32_t flag)
{
    return (atomic_load_explicit(&f->flags, memory_order_relaxed) & flag) != 0;
}
static inline void cap__fd_set(cap__fd *f, uint32_t flag)
{
    atomic_fetch_or_explicit(&f->flags, flag, memory_order_relaxed);
}
static inline void cap__fd_clear(cap__fd *f, uint32_t flag)
{
    atomic_fetch_and_explicit(&f->flags, ~flag, memory_order_relaxed);
}
/* Before an owned call on f (arch/ownedxfer.h) that a socket makes
 * (accept, connect, sendfile): marks f, for the rest of its life, as a
 * descriptor such calls are made on, so that its give-back (fdopen,
 * SCM_RIGHTS, dup2 onto 0-2: cap__fd_disown) kicks the other workers, and
 * a call of theirs between its ownership test and its system call, or
 * already waiting in the kernel now that the socket blocks, starts over
 * at the test. Sockets never so used (most: their transfers use
 * MSG_DONTWAIT) are given back without a signal per worker. The mark is
 * stored before the call's test, the give-back clears CAP__FDF_OWNED
 * before it looks at the mark (each a full barrier on x86): a call that
 * found the socket owned is seen. */
static inline void cap__fd_owned_call(cap__fd *f)
{
    if (!atomic_load(&f->owned_calls))
        atomic_store(&f->owned_calls, 1);
}

/* Sets f's SO_RCVTIMEO (dir CAP__IO_READ) or SO_SNDTIMEO in ns (0: none).
 * A non-zero one also sets CAP__FDF_TIMEO, which the transfers look at
 * first, so that one without timeouts never reads timeo[] (the record's
 * second cache line). The flag goes with the life (end_life). */
static inline void cap__fd_set_timeo(cap__fd *f, int dir, uint64_t ns)
{
    atomic_store(&f->timeo[dir], ns);
    if (ns != 0)
        cap__fd_set(f, CAP__FDF_TIMEO);
}
/* The timeout in ns that a SO_RCVTIMEO or SO_SNDTIMEO the kernel took
 * (tv_usec below a second) sets, as the kernel's sock_set_timeout sets
 * it: 0 (none) for {0, 0}; at once (1 ns) for a negative tv_sec; and one
 * past 2^64 ns waits for ever rather than wrap round to a short one. */
static inline uint64_t cap__fd_timeo_ns(long sec, long usec)
{
    if (sec < 0)
        return 1;
    return cap__timeout_ns((uint64_t)sec, (uint64_t)usec * 1000u);
}

#endif /* CAP_IO_FD_H */

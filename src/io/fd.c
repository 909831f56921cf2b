/* SPDX-License-Identifier: MIT */
/*
 * The descriptor table (see fd.h): two-level, chunks of 1024 records
 * allocated on first touch and never freed; classification of unknown
 * descriptors; the life transitions (created, dup, closing). Inside a
 * signal handler the transitions are queued for the dispatch after it
 * (fdsig.c), which applies them through cap__fd_relife.
 *
 * Only raw system calls here: the libc names are interposed by this very
 * library and must not be re-entered.
 */
#include "io/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "io/io.h"
#include "io/netio.h"
#include "io/pipe.h"
#include "io/sigintr.h"
#include "io/ttyfile.h"
#include "io/wait.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/asan.h"
#include "util/sigctx.h"
#include "util/spin.h"

_Atomic(cap__fd *) cap__fd_chunks[CAP__FD_MAX >> CAP__FD_CHUNK_SHIFT];

cap__fd *cap__fd_get_slow(int fd)
{
    if ((unsigned)fd >= CAP__FD_MAX)
        return NULL;
    _Atomic(cap__fd *) *slot = &cap__fd_chunks[fd >> CAP__FD_CHUNK_SHIFT];
    cap__fd *c = atomic_load_explicit(slot, memory_order_acquire);
    if (c == NULL) {
        /* Racing allocators: one CAS wins, the loser unmaps its chunk.
         * Fresh anonymous pages: every field starts at zero (kind
         * unknown, no flags, gen 0), each record is two cache lines
         * exactly (fd.h: page-aligned), and a page is touched only when
         * one of its 32 records is: a process that uses descriptors 0-2
         * and the runtime's few high ones faults in 2 of the chunk's 32
         * pages (aligned_alloc and a memset faulted in all, 128 KiB, at
         * every start-up). Never freed, as before. */
        size_t len = CAP__FD_CHUNK_LEN * sizeof(cap__fd);
        cap__fd *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (fresh == MAP_FAILED)
            return NULL;
        cap__fd *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(slot, &expected, fresh,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire)) {
            c = fresh;
            cap__asan_root(fresh, len);
        } else {
            munmap(fresh, len);
            c = expected;
        }
    }
    return &c[fd & (CAP__FD_CHUNK_LEN - 1)];
}

void cap__fd_kernel_timeouts(int fd, uint64_t timeo[2])
{
    static const int names[2] = { SO_RCVTIMEO, SO_SNDTIMEO };
    for (int d = 0; d < 2; d++) {
        struct timeval tv = { 0, 0 };
        socklen_t len = sizeof tv;
        timeo[d] = syscall(SYS_getsockopt, fd, SOL_SOCKET, names[d], &tv, &len) == 0
                       ? cap__fd_timeo_ns(tv.tv_sec, tv.tv_usec)
                       : 0;
    }
}

void cap__fd_wait_closed(cap__fd *f)
{
    while (cap__fd_has(f, CAP__FDF_CLOSING) && !cap__in_signal_handler()) {
        cap__thread *self = cap__current();
        if (self != NULL)
            cap__yield(self);
        else
            cap__kernel_yield();
    }
}

int cap__fd_classify_slow(cap__fd *f, int fd)
{
    cap__fd_wait_closed(f);
    int kind = atomic_load_explicit(&f->kind, memory_order_acquire);
    if (kind != CAP__FD_UNKNOWN)
        return kind; /* the life that began after the close knows it */
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0)
        return CAP__FD_BAD; /* not remembered: the number may be opened later */
    uint32_t flags = 0;
    if (S_ISSOCK(st.st_mode)) {
        kind = CAP__FD_SOCKET;
        int type = 0;
        socklen_t len = sizeof type;
        if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
            type == SOCK_STREAM) {
            flags |= CAP__FDF_STREAM_SOCK;
            int proto = 0;
            len = sizeof proto;
            if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 &&
                proto == IPPROTO_TCP)
                flags |= CAP__FDF_DRAINS; /* see the top of fd.h */
        }
        /* Timeouts set before we saw the socket (inherited, or set by a
         * library through a path we do not see). */
        uint64_t timeo[2];
        cap__fd_kernel_timeouts(fd, timeo);
        cap__fd_set_timeo(f, CAP__IO_READ, timeo[CAP__IO_READ]);
        cap__fd_set_timeo(f, CAP__IO_WRITE, timeo[CAP__IO_WRITE]);
    } else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode)) {
        kind = CAP__FD_FILE;
    } else {
        kind = CAP__FD_STREAM;
    }
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        flags |= CAP__FDF_APP_NONBLOCK;
    if (fl >= 0 && (fl & O_DIRECT))
        flags |= CAP__FDF_DIRECT;
    cap__fd_set(f, flags);
    atomic_store_explicit(&f->kind, (uint8_t)kind, memory_order_release);
    return kind;
}

/* Ends the current life of f (its lock held) and begins the next: new
 * gen, the given kind and flags, no timeouts, waiters woken with EBADF.
 * The kind and flags go in with the gen, never through "unknown", so a
 * thread looking at the record meanwhile never classifies it from the
 * kernel and mixes what it learnt into the new flags. Kind before flags:
 * a reader loads flags first (cap__fd_classify), so one that finds
 * CAP__FDF_CLOSING gone finds the kind of the life that cleared it, not
 * the closed one's. Returns the flags the old life had. */
static uint32_t end_life_locked(cap__fd *f, int kind, uint32_t flags)
{
    atomic_fetch_add(&f->gen, 1);
    atomic_store_explicit(&f->deferred, 0, memory_order_relaxed);
    atomic_store_explicit(&f->owned_calls, 0, memory_order_relaxed);
    atomic_store(&f->kind, (uint8_t)kind);
    uint32_t old = atomic_exchange(&f->flags, flags);
    atomic_store(&f->timeo[0], 0);
    atomic_store(&f->timeo[1], 0);
    atomic_store_explicit(&f->disk_streak, 0, memory_order_relaxed);
    atomic_store_explicit(&f->peer, 0, memory_order_relaxed);
    atomic_store_explicit(&f->drained, 0, memory_order_relaxed);
    f->internal = NULL;
    cap__io_wake_all_locked(f, EBADF);
    return old;
}

/* What a signal handler may do to the table (util/sigctx.h): nothing that
 * takes a lock. The changes go to the dispatch after it (fdsig.c). */
static void defer_life(int fd, int kind, uint32_t flags, const uint64_t timeo[2])
{
    cap__fd_defer(CAP__FDD_LIFE, fd, kind, flags, timeo);
}

/* Ends f's registration in the backend, if its current life has one, in
 * the same hold of f->lock that ends the life (caller bumps gen before
 * letting go): an arm, made only under f->lock for the gen current
 * there, came before this removal or finds the life over (netio.h). A
 * sole socket's close ends its epoll registration by itself (fd.h). */
static void disarm_locked(cap__fd *f, int fd, uint32_t flags)
{
    if ((flags & CAP__FDF_REGISTERED) &&
        !((flags & CAP__FDF_SOLE) && cap__netio_active->close_releases))
        cap__netio_active->disarm(f, fd, atomic_load(&f->gen));
}

/* Whether f's life is gen or one that a queued change began from gen. */
static bool relife_due(cap__fd *f, uint32_t gen)
{
    uint32_t now = atomic_load(&f->gen);
    return now == gen || (now == gen + 1 && atomic_load(&f->deferred));
}

void cap__fd_relife(int fd, uint32_t gen, int kind, uint32_t flags, const uint64_t timeo[2])
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !relife_due(f, gen))
        return; /* a new life began since, which ended the one the handler saw */
    if (atomic_load(&f->flags) & CAP__FDF_LOCAL)
        cap__pipe_escape(f, true);
    uint32_t old = 0;
    cap__spin_lock(&f->lock);
    if (relife_due(f, gen)) {
        /* The number may name another file by now: a disarm then finds
         * nothing of the new one (epoll: no such registration; poll and
         * io_uring: keyed by the record and its gen). */
        disarm_locked(f, fd, atomic_load(&f->flags));
        old = end_life_locked(f, kind, flags);
        atomic_store_explicit(&f->deferred, 1, memory_order_relaxed);
        cap__fd_set_timeo(f, 0, timeo[0]);
        cap__fd_set_timeo(f, 1, timeo[1]);
    }
    cap__spin_unlock(&f->lock);
    if (old & (CAP__FDF_TTY | CAP__FDF_FIFO))
        cap__ttyfile_forget(fd);
}

void cap__fd_closing(int fd)
{
    if (cap__in_signal_handler()) {
        defer_life(fd, CAP__FD_UNKNOWN, 0, (const uint64_t[2]){ 0, 0 });
        return;
    }
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL)
        return;
    if (atomic_load(&f->flags) & CAP__FDF_LOCAL) /* the other end's waiters park armed, for the hang-up */
        cap__pipe_escape(f, true);
    /* The first step of fd.h's two: a new gen and the waiters woken, but
     * kind and flags stay while the number still names the file. The
     * disarm comes first, while fd still names the file. */
    cap__spin_lock(&f->lock);
    bool armed = (atomic_load(&f->flags) & CAP__FDF_REGISTERED) != 0;
    disarm_locked(f, fd, atomic_load(&f->flags));
    atomic_fetch_add(&f->gen, 1);
    atomic_store_explicit(&f->deferred, 0, memory_order_relaxed);
    cap__fd_set(f, CAP__FDF_CLOSING);
    cap__io_wake_all_locked(f, EBADF);
    cap__spin_unlock(&f->lock);
    if (armed && cap__netio_active->release != NULL)
        cap__netio_active->release(f, fd); /* no backend wait holds the file now */
}

void cap__fd_closed(int fd)
{
    if (cap__in_signal_handler())
        return; /* cap__fd_closing queued the whole change */
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_CLOSING))
        return;
    uint32_t old = 0;
    cap__spin_lock(&f->lock);
    /* A life begun since (the number reused) replaced the flags. */
    if (cap__fd_has(f, CAP__FDF_CLOSING))
        old = end_life_locked(f, CAP__FD_UNKNOWN, 0);
    cap__spin_unlock(&f->lock);
    if (old & (CAP__FDF_TTY | CAP__FDF_FIFO))
        cap__ttyfile_forget(fd);
}

static void closing_record(int fd, cap__fd *f, void *arg)
{
    (void)f;
    (void)arg;
    cap__fd_closing(fd);
}

static void closed_record(int fd, cap__fd *f, void *arg)
{
    (void)f;
    (void)arg;
    cap__fd_closed(fd);
}

void cap__fd_closing_range(unsigned first, unsigned last)
{
    cap__fd_foreach_range(first, last, closing_record, NULL);
}

void cap__fd_closed_range(unsigned first, unsigned last)
{
    cap__fd_foreach_range(first, last, closed_record, NULL);
}

static void forget_if_closed(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if (atomic_load(&f->kind) == CAP__FD_UNKNOWN && atomic_load(&f->flags) == 0)
        return; /* nothing known that could go stale */
    if (syscall(SYS_fcntl, fd, F_GETFD) < 0 && errno == EBADF) {
        cap__fd_closing(fd);
        cap__fd_closed(fd);
    }
}

void cap__fd_forget_closed(void)
{
    cap__fd_foreach(forget_if_closed, NULL);
}

/* Plain-call descriptors (pipes, FIFOs, eventfds: kind STREAM; sockets
 * with owned calls, fd.h) this kernel thread gave back their blocking
 * mode so far; a give-back walk that moved it kicks the other workers
 * (given_back_kick). */
static __thread unsigned given_back __attribute__((tls_model("initial-exec")));

/* After a give-back that started at count `before`: a thread of another
 * worker may be between its owned test and its plain call on one of
 * those descriptors, or already blocked in that call now that it blocks.
 * A kick makes it start over at the test (arch/ownedxfer.h), which now
 * fails, and take the RWF_NOWAIT way. */
static void given_back_kick(unsigned before)
{
    if (given_back == before)
        return;
    const cap__worker *self = cap__worker_self();
    for (int i = 0; i < cap__rt.nworkers; i++) {
        const cap__worker *w = &cap__rt.workers[i];
        pid_t tid = atomic_load_explicit(&w->tid, memory_order_acquire);
        if (w != self && tid != 0)
            cap__sig_kick(tid);
    }
}

void cap__fd_disown(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_OWNED))
        return;
    /* The mode first, then the flag: a call that finds the flag clear
     * must find the kernel's O_NONBLOCK as the application set it, or it
     * takes the kernel's for the application's and answers EAGAIN (wait.c,
     * file_nonblock_unseen: a blocking read of a pipe that a fork on
     * another worker was giving back said EAGAIN so). A plain call of an
     * owned pipe or FIFO that passed its test meanwhile, or is still
     * before it, may block once the mode is blocking: the walk that gave
     * it back kicks the other workers afterwards, and the kick makes the
     * call start over at its test (given_back_kick, arch/ownedxfer.h). */
    bool now_blocking = !cap__fd_has(f, CAP__FDF_APP_NONBLOCK);
    if (now_blocking) {
        long fl = syscall(SYS_fcntl, fd, F_GETFL);
        if (fl >= 0)
            syscall(SYS_fcntl, fd, F_SETFL, fl & ~O_NONBLOCK);
        if (atomic_load(&f->kind) == CAP__FD_STREAM)
            given_back++;
    }
    cap__fd_clear(f, CAP__FDF_OWNED);
    /* A socket that accepts, connects or sends files has owned calls too,
     * marked (fd.h, cap__fd_owned_call): looked at after the clear. */
    atomic_thread_fence(memory_order_seq_cst);
    if (now_blocking && atomic_load(&f->kind) == CAP__FD_SOCKET && atomic_load(&f->owned_calls))
        given_back++;
    /* After the mode: the waiters it wakes try again the RWF_NOWAIT way. */
    if (cap__fd_has(f, CAP__FDF_LOCAL))
        cap__pipe_escape(f, false);
}

/* The record visitor of cap__fd_disown_pipes; *forking: also ends every
 * socket's soleness. */
static void disown_pipe(int fd, cap__fd *f, void *forking)
{
    if (*(bool *)forking && cap__fd_has(f, CAP__FDF_SOLE))
        cap__fd_clear(f, CAP__FDF_SOLE);
    if (*(bool *)forking && cap__fd_has(f, CAP__FDF_OWNED) && !cap__fd_has(f, CAP__FDF_FORKED))
        cap__fd_set(f, CAP__FDF_FORKED); /* the child holds it too: cap__fd_exec */
    if (atomic_load(&f->kind) == CAP__FD_STREAM && cap__fd_has(f, CAP__FDF_OWNED))
        cap__fd_disown(fd);
}

void cap__fd_disown_pipes(void)
{
    if (cap__in_signal_handler()) {
        cap__fd_defer(CAP__FDD_DISOWN_PIPES, -1, 0, 0, NULL);
        return;
    }
    bool forking = false;
    unsigned before = given_back;
    cap__fd_foreach(disown_pipe, &forking);
    given_back_kick(before);
}

void cap__fd_forking(void)
{
    bool forking = true;
    unsigned before = given_back;
    cap__fd_foreach(disown_pipe, &forking);
    given_back_kick(before);
}

/* The record visitor of cap__fd_spawning: as disown_pipe's, but an owned
 * pipe, FIFO or eventfd with FD_CLOEXEC stays owned. */
static void spawn_disown(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if ((atomic_load(&f->flags) & CAP__FDF_OWNED) && atomic_load(&f->kind) == CAP__FD_STREAM) {
        long fdfl = syscall(SYS_fcntl, fd, F_GETFD);
        if (fdfl >= 0 && (fdfl & FD_CLOEXEC))
            return;
    }
    bool forking = true;
    disown_pipe(fd, f, &forking);
}

void cap__fd_spawning(void)
{
    unsigned before = given_back;
    cap__fd_foreach(spawn_disown, NULL);
    given_back_kick(before);
}

/* The record visitor of cap__fd_exec. */
static void exec_disown(int fd, cap__fd *f, void *arg)
{
    (void)arg;
    if ((atomic_load(&f->flags) & (CAP__FDF_OWNED | CAP__FDF_FORKED)) != CAP__FDF_OWNED)
        return;
    long fdfl = syscall(SYS_fcntl, fd, F_GETFD);
    if (fdfl >= 0 && !(fdfl & FD_CLOEXEC))
        cap__fd_disown_file(fd);
}

void cap__fd_exec(void)
{
    unsigned before = given_back;
    cap__fd_foreach(exec_disown, NULL);
    given_back_kick(before); /* for a call that fails and returns */
}

/* The numbers of fd's open file that a dup marked (CAP__FDF_DUPED, fd.h),
 * for cap__fd_set_view and cap__fd_disown_file. */
struct same_open {
    int fd;       /* the number the walk is for */
    pid_t pid;
    bool by_kcmp; /* kcmp works; else inode and access mode */
    dev_t dev;
    ino_t ino;
    long accmode;
    struct file_change {
        uint32_t mask, bits; /* cap__fd_set_view's */
        int dir;             /* cap__fd_set_timeo_file's, or -1 */
        uint64_t ns;
    } change; /* made on each of the numbers (change_file) */
};

/* False if fd cannot be described (not open any more). */
static bool same_open_init(struct same_open *s, int fd)
{
    struct stat st;
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    if (fl < 0 || syscall(SYS_fstat, fd, &st) != 0)
        return false;
    *s = (struct same_open){ .fd = fd, .pid = (pid_t)syscall(SYS_getpid), .by_kcmp = true,
                             .dev = st.st_dev, .ino = st.st_ino, .accmode = fl & O_ACCMODE };
    return true;
}

/* Whether fd (a marked record other than s->fd) is s->fd's open file. */
static bool same_open_file(struct same_open *s, int fd, cap__fd *f)
{
    if (fd == s->fd || !cap__fd_has(f, CAP__FDF_DUPED))
        return false;
    if (s->by_kcmp) {
        long r = syscall(SYS_kcmp, s->pid, s->pid, KCMP_FILE, s->fd, fd);
        if (r >= 0)
            return r == 0;
        if (errno != ENOSYS && errno != EPERM)
            return false; /* fd is not open */
        s->by_kcmp = false;
    }
    /* Both ends of a pipe have one inode: the access mode tells them apart. */
    struct stat st;
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) == s->accmode && syscall(SYS_fstat, fd, &st) == 0 &&
           st.st_dev == s->dev && st.st_ino == s->ino;
}

static void disown_same(int fd, cap__fd *f, void *arg)
{
    if (cap__fd_has(f, CAP__FDF_OWNED) && same_open_file(arg, fd, f))
        cap__fd_disown(fd);
}

void cap__fd_disown_file(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_OWNED))
        return;
    struct same_open s;
    bool walk = cap__fd_has(f, CAP__FDF_DUPED) && same_open_init(&s, fd);
    unsigned before = given_back;
    cap__fd_disown(fd);
    if (walk)
        cap__fd_foreach(disown_same, &s);
    given_back_kick(before);
}

static void set_view_bits(cap__fd *f, uint32_t mask, uint32_t bits)
{
    if (mask & ~bits)
        cap__fd_clear(f, mask & ~bits);
    if (mask & bits)
        cap__fd_set(f, mask & bits);
}

static void apply_change(cap__fd *f, const struct file_change *c)
{
    if (c->dir >= 0)
        cap__fd_set_timeo(f, c->dir, c->ns);
    else
        set_view_bits(f, c->mask, c->bits);
}

static void change_same(int fd, cap__fd *f, void *arg)
{
    struct same_open *s = arg;
    if (same_open_file(s, fd, f))
        apply_change(f, &s->change);
}

/* Makes c on fd's record f and on the record of every other number of
 * its open file (a dup's: CAP__FDF_DUPED). */
static void change_file(int fd, cap__fd *f, struct file_change c)
{
    apply_change(f, &c);
    struct same_open s;
    if (!cap__fd_has(f, CAP__FDF_DUPED) || !same_open_init(&s, fd))
        return;
    s.change = c;
    cap__fd_foreach(change_same, &s);
}

void cap__fd_set_view(int fd, uint32_t mask, uint32_t bits)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f != NULL)
        change_file(fd, f, (struct file_change){ .mask = mask, .bits = bits, .dir = -1 });
}

void cap__fd_set_timeo_file(int fd, int dir, uint64_t ns)
{
    cap__fd *f = cap__fd_get(fd);
    if (f != NULL)
        change_file(fd, f, (struct file_change){ .dir = dir, .ns = ns });
}

void cap__fd_shared(int fd)
{
    if (cap__in_signal_handler()) {
        cap__fd_defer(CAP__FDD_SHARED, fd, 0, 0, NULL);
        return;
    }
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL)
        return;
    /* The receiver gets the file with its flags: give it back the blocking
     * mode the application believes it has, as for a child process, on
     * every number of the file (a private pipe falls back in the same
     * step). */
    cap__fd_disown_file(fd);
    if (cap__fd_has(f, CAP__FDF_SOLE))
        cap__fd_clear(f, CAP__FDF_SOLE);
    if (cap__fd_has(f, CAP__FDF_LOCAL))
        cap__pipe_escape(f, false);
}

void cap__fd_created(int fd, int kind, uint32_t flags)
{
    if (cap__in_signal_handler()) {
        defer_life(fd, kind, flags, (const uint64_t[2]){ 0, 0 });
        return;
    }
    cap__fd *f = cap__fd_get(fd);
    if (f == NULL)
        return;
    /* A previous life closed behind our back (a raw close, or a close in a
     * signal handler whose queued change comes after this) may still have
     * waiters and a registration of the old file: the waiters are woken
     * with EBADF and the registration ended, as a close would (a uring
     * poll holds the old file open; its cancel finds it by gen). */
    cap__spin_lock(&f->lock);
    uint32_t fl = atomic_load(&f->flags);
    if (!(fl & CAP__FDF_CLOSING)) /* a close's first step disarmed it */
        disarm_locked(f, fd, fl);
    uint32_t old = end_life_locked(f, kind, flags);
    cap__spin_unlock(&f->lock);
    if (old & (CAP__FDF_TTY | CAP__FDF_FIFO)) /* a private description (io/ttyfile.h) */
        cap__ttyfile_forget(fd);
}

void cap__fd_dup_of(int newfd, int oldfd)
{
    cap__fd *o = cap__fd_peek(oldfd);
    int kind = CAP__FD_UNKNOWN;
    uint32_t flags = 0;
    uint64_t timeo[2] = { 0, 0 };
    /* A close under way on oldfd is not waited for: dup2(a, b) beside
     * dup2(b, a) would each wait for the other's close, which ends only
     * after its own dup_of. The record still describes the file the number
     * named before that close (fd.h), which is what the dup copied unless
     * an open we do not see took the number in between. */
    if (o != NULL) {
        if (cap__fd_has(o, CAP__FDF_SOLE)) /* a second name: no longer sole */
            cap__fd_clear(o, CAP__FDF_SOLE);
        if (cap__fd_has(o, CAP__FDF_LOCAL)) { /* a second name: no longer private */
            if (cap__in_signal_handler())
                cap__fd_defer(CAP__FDD_ESCAPE, oldfd, 0, 0, NULL);
            else
                cap__pipe_escape(o, false);
        }
        /* Two numbers of one file: they share its view from now on (fd.h). */
        if (!cap__fd_has(o, CAP__FDF_DUPED))
            cap__fd_set(o, CAP__FDF_DUPED);
        kind = atomic_load(&o->kind);
        flags = atomic_load(&o->flags) &
                (CAP__FDF_OWNED | CAP__FDF_APP_NONBLOCK | CAP__FDF_NOWAIT_BAD_RD |
                 CAP__FDF_NOWAIT_BAD_WR |
                 CAP__FDF_STREAM_SOCK | CAP__FDF_DIRECT | CAP__FDF_DRAINS |
                 CAP__FDF_NODRAIN | CAP__FDF_DUPED | CAP__FDF_LOWAT |
                 CAP__FDF_WR_CHECKED | CAP__FDF_WR_INLINE | CAP__FDF_NOT_PIPE |
                 CAP__FDF_FORKED | CAP__FDF_SIGNALFD | CAP__FDF_SIGEPOLL |
                 CAP__FDF_TTY | CAP__FDF_NOT_TTY | CAP__FDF_FIFO);
        timeo[0] = atomic_load(&o->timeo[0]);
        timeo[1] = atomic_load(&o->timeo[1]);
    }
    flags |= CAP__FDF_DUPED;
    if (cap__in_signal_handler()) {
        defer_life(newfd, kind, flags, timeo);
        return;
    }
    cap__fd_created(newfd, kind, flags);
    cap__fd *n = cap__fd_peek(newfd);
    if (n != NULL) {
        cap__fd_set_timeo(n, 0, timeo[0]);
        cap__fd_set_timeo(n, 1, timeo[1]);
    }
}

void cap__fd_foreach_range(unsigned first, unsigned last,
                           void (*fn)(int fd, cap__fd *f, void *arg), void *arg)
{
    if (last >= CAP__FD_MAX)
        last = CAP__FD_MAX - 1;
    for (unsigned fd = first; fd <= last; fd++) {
        cap__fd *chunk = atomic_load_explicit(&cap__fd_chunks[fd >> CAP__FD_CHUNK_SHIFT],
                                              memory_order_acquire);
        if (chunk == NULL) {
            fd |= CAP__FD_CHUNK_LEN - 1; /* the whole chunk is unknown */
            continue;
        }
        fn((int)fd, &chunk[fd & (CAP__FD_CHUNK_LEN - 1)], arg);
    }
}

void cap__fd_foreach(void (*fn)(int fd, cap__fd *f, void *arg), void *arg)
{
    cap__fd_foreach_range(0, CAP__FD_MAX - 1, fn, arg);
}

/* SPDX-License-Identifier: MIT */
/* Helpers for the I/O tests: thread spawning, loopback listeners, and
 * raising RLIMIT_NOFILE. Plain libc names only: they are what the
 * interception must handle. */
#ifndef CAP_TESTS_IO_UTIL_H
#define CAP_TESTS_IO_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <capriccio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* errno through the library's accessor, which is not declared const as
 * glibc's __errno_location is, so the compiler cannot keep its address
 * across a call that parks: the programs stay right when a thread resumes
 * on another worker, and the suite runs under CAP_MIGRATE=1 too
 * (tests.cmake). The same mapping as <capriccio/pthread.h>. */
int *cap_errno_location(void);
#undef errno
#define errno (*cap_errno_location())

static inline cap_thread_t spawn(void *(*fn)(void *), void *arg)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, fn, arg), 0);
    return t;
}

static inline void *join(cap_thread_t t)
{
    void *r = NULL;
    CHECK_EQ(cap_thread_join(t, &r), 0);
    return r;
}

/* A thread that counts while other threads wait: a test reads the count
 * before and after a call to see whether the call let it run (a call that
 * held its worker did not). ticker_start spawns it, counting once per
 * period_ns of sleep; ticker_stop ends it. One per test. */
static atomic_long ticker_count;
static atomic_int ticker_stopping;
static cap_thread_t ticker_thread;

static void *ticker_main(void *arg)
{
    uint64_t period_ns = (uint64_t)(uintptr_t)arg;
    while (!atomic_load(&ticker_stopping)) {
        atomic_fetch_add(&ticker_count, 1);
        cap_sleep_ns(period_ns);
    }
    return NULL;
}

static inline void ticker_start(uint64_t period_ns)
{
    ticker_thread = spawn(ticker_main, (void *)(uintptr_t)period_ns);
}

static inline long ticker_ticks(void)
{
    return atomic_load(&ticker_count);
}

static inline void ticker_stop(void)
{
    atomic_store(&ticker_stopping, 1);
    join(ticker_thread);
}

/* A thread that counts its turns, yielding between them, until `stop`:
 * a test reads `ticks` around a call to see whether other threads ran
 * while it waited. Run it with spawn(ticker_run, &some_ticker). */
struct ticker {
    atomic_long ticks;
    atomic_int stop;
};

static inline void *ticker_run(void *arg)
{
    struct ticker *t = arg;
    while (!atomic_load(&t->stop)) {
        atomic_fetch_add(&t->ticks, 1);
        cap_yield();
    }
    return NULL;
}

/* Blocking reads into buf (cap bytes) until n bytes came, each read asking
 * for all the room left, so a read that returns more than n fails the
 * check. */
static inline void read_exactly_n(int fd, char *buf, size_t cap, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, cap - got);
        CHECK_GT(r, 0);
        got += (size_t)r;
    }
    CHECK_EQ(got, n);
}

/* A thread that reads one byte from the descriptor *arg and returns it. */
static inline void *read_one_byte(void *arg)
{
    int fd = *(int *)arg;
    char c = 0;
    CHECK_EQ(read(fd, &c, 1), 1);
    return (void *)(intptr_t)c;
}

/* Checks that the backend still wakes parked readers: a thread parks on
 * an empty new pipe, and a write of token must wake it. */
static inline void parked_pipe_read_is_woken(char token)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    cap_thread_t t = spawn(read_one_byte, &p[0]);
    for (int i = 0; i < 10; i++)
        cap_yield(); /* let the reader park */
    CHECK_EQ(write(p[1], &token, 1), 1);
    CHECK_EQ((intptr_t)join(t), token);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

/* A temporary file of `blocks` blocks of `block` bytes (ones), unlinked
 * and just written, so in the page cache: every read of it hits. Returns
 * the descriptor. */
static inline int cached_file(int blocks, size_t block)
{
    char path[] = "/tmp/capriccio-io-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    unlink(path);
    unsigned char *b = malloc(block);
    CHECK(b != NULL);
    memset(b, 1, block);
    for (int k = 0; k < blocks; k++)
        CHECK_EQ(write(fd, b, block), (ssize_t)block);
    free(b);
    return fd;
}

/* A file of `blocks` blocks of `block` bytes, block k written by
 * fill(buf, k), flushed to disk and opened again read-only with `flags`
 * added (O_DIRECT), then unlinked. Returns the descriptor, or -1 if that
 * open failed (a filesystem without O_DIRECT). */
static inline int flushed_file(int blocks, size_t block, void (*fill)(unsigned char *buf, int k),
                               int flags)
{
    char path[] = "/tmp/capriccio-io-XXXXXX";
    int w = mkstemp(path);
    CHECK_GE(w, 0);
    unsigned char *b = aligned_alloc(4096, block);
    CHECK(b != NULL);
    for (int k = 0; k < blocks; k++) {
        fill(b, k);
        CHECK_EQ(write(w, b, block), (ssize_t)block);
    }
    free(b);
    CHECK_EQ(fsync(w), 0);
    CHECK_EQ(close(w), 0);
    int fd = open(path, O_RDONLY | flags);
    unlink(path);
    return fd;
}

/* The O_DIRECT tests' file (flushed_file with O_DIRECT). Exits 77
 * (skipped) under CAP_DISKIO=blocking, which blocks the worker by design,
 * and where the filesystem has no O_DIRECT. */
static inline int odirect_file(int blocks, size_t block, void (*fill)(unsigned char *buf, int k))
{
    const char *disk = getenv("CAP_DISKIO");
    if (disk != NULL && strcmp(disk, "blocking") == 0) {
        fprintf(stderr, "CAP_DISKIO=blocking blocks the worker: skipped\n");
        exit(77);
    }
    int fd = flushed_file(blocks, block, fill, O_DIRECT);
    if (fd < 0) {
        fprintf(stderr, "O_DIRECT unsupported here: skipped\n");
        exit(77);
    }
    return fd;
}

/* A TCP listener on 127.0.0.1 with a kernel-chosen port. */
static inline int tcp_listener(int type, int backlog, int *port)
{
    int s = socket(AF_INET, type, 0);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    if (type == SOCK_STREAM)
        CHECK_EQ(listen(s, backlog), 0);
    socklen_t len = sizeof a;
    CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return s;
}

static inline int tcp_connect(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(s, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        close(s);
        return -1;
    }
    return s;
}

/* A blocking TCP listener on 127.0.0.1 made by raw system calls, past
 * the runtime, as an inherited or socket-activated one is: one it does
 * not own. */
static inline int raw_tcp_listener(int backlog, int *port)
{
    int s = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(s, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(syscall(SYS_bind, s, &a, sizeof a), 0);
    CHECK_EQ(syscall(SYS_listen, s, backlog), 0);
    socklen_t len = sizeof a;
    CHECK_EQ(syscall(SYS_getsockname, s, &a, &len), 0);
    *port = ntohs(a.sin_port);
    return s;
}

/* A blocking connection to 127.0.0.1:port made by raw system calls; its
 * own end's address in *local unless NULL. */
static inline int raw_tcp_connect(int port, struct sockaddr_in *local)
{
    int s = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(s, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(syscall(SYS_connect, s, &a, sizeof a), 0);
    socklen_t len = sizeof a;
    if (local != NULL)
        CHECK_EQ(syscall(SYS_getsockname, s, local, &len), 0);
    return s;
}

/* Sends on socket c until its buffers and the peer's are full: the bytes
 * sent. */
static inline size_t fill_socket(int c)
{
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    size_t sent = 0;
    for (;;) {
        ssize_t n = send(c, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            CHECK_EQ(errno, EAGAIN);
            return sent;
        }
        sent += (size_t)n;
    }
}

/* Reads s to its end: the bytes read. */
static inline size_t read_to_eof(int s)
{
    static char buf[65536];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(s, buf, sizeof buf);
        CHECK_GE(n, 0);
        if (n == 0)
            return got;
        got += (size_t)n;
    }
}

/* Whether fd is readable now (a raw poll: also from a signal handler or
 * a tracer process). */
static inline bool readable_now(int fd)
{
    struct pollfd pf = { .fd = fd, .events = POLLIN };
    return syscall(SYS_poll, &pf, 1, 0) == 1;
}

/* One byte through a pipe, between processes or threads. */
static inline void put_byte(int fd, char c)
{
    CHECK_EQ(write(fd, &c, 1), 1);
}

static inline char take_byte(int fd)
{
    char c = 0;
    CHECK_EQ(read(fd, &c, 1), 1);
    return c;
}

/* A message of the data v that carries fd (SCM_RIGHTS): r->m, once
 * rights_msg_init has filled r. (ctl last: glibc's cmsghdr ends in a
 * flexible array.) */
struct rights_msg {
    struct msghdr m;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
};

static inline void rights_msg_init(struct rights_msg *r, int fd, struct iovec *v)
{
    memset(r, 0, sizeof *r);
    r->m.msg_iov = v;
    r->m.msg_iovlen = 1;
    r->m.msg_control = r->ctl.buf;
    r->m.msg_controllen = sizeof r->ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&r->m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
}

/* Sends one byte carrying fd (SCM_RIGHTS) over the Unix socket sock. */
static inline void send_fd(int sock, int fd)
{
    char one = 'x';
    struct iovec v = { &one, 1 };
    struct rights_msg r;
    rights_msg_init(&r, fd, &v);
    CHECK_EQ(sendmsg(sock, &r.m, 0), 1);
}

/* Receives the one byte and descriptor send_fd sent; the descriptor is
 * close-on-exec here. */
static inline int recv_fd(int sock)
{
    char one;
    struct iovec v = { &one, 1 };
    struct rights_msg r;
    rights_msg_init(&r, -1, &v);
    CHECK_EQ(recvmsg(sock, &r.m, MSG_CMSG_CLOEXEC), 1);
    struct cmsghdr *c = CMSG_FIRSTHDR(&r.m);
    CHECK(c != NULL && c->cmsg_type == SCM_RIGHTS);
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

/* Sends sig to the process every millisecond until *done is set: one
 * that comes before the call it is for has parked interrupts nothing, so
 * it repeats. Start it with spawn(signal_until_done, &s). */
struct signal_until {
    int sig;
    atomic_int *done;
};

static inline void *signal_until_done(void *arg)
{
    struct signal_until *s = arg;
    while (!atomic_load(s->done)) {
        CHECK_EQ(kill(getpid(), s->sig), 0);
        cap_sleep_ns(1000000);
    }
    return NULL;
}

/* Blocks sig in the calling thread and returns a non-blocking signalfd
 * (close-on-exec) of it. */
static inline int blocked_signalfd(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    int fd = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    return fd;
}

/* One round i of a test of waits that a signal sent to the waiting thread
 * must end: waits until *ready says the waiter has entered round i (its
 * count passed i), gives it time to park first every other round (either
 * way its wait must see the signal), then sends sig to it. */
static inline void send_when_waiting(cap_thread_t t, int sig, atomic_int *ready, int i)
{
    while (atomic_load(ready) <= i)
        cap_sleep_ns(100000);
    if (i % 2 == 0)
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_thread_kill(t, sig), 0);
}

/* Waits until *count passes i (the waiter's round i is over). */
static inline void wait_past(atomic_int *count, int i)
{
    while (atomic_load(count) <= i)
        cap_sleep_ns(100000);
}

/* Installs fn for sig with sa_flags flags and an empty sa_mask. */
/* Queues sig to the calling kernel thread as another process's sigqueue
 * would (SI_QUEUE): a process signal for the runtime, numbered, whose
 * handler runs here once the mask lets it in. No stdio, no CHECK: usable
 * where those would make a handed jump themselves. 0 or -1. */
static inline long queue_here(int sig)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    return syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, &si);
}

/* libuv's signal lock: a pipe holding one byte while the lock is free;
 * taking it reads the byte (waiting for it), letting go writes it back. */
static inline void pipe_byte_lock(const int p[2])
{
    char c;
    while (read(p[0], &c, 1) != 1)
        CHECK_EQ(errno, EINTR);
}

static inline void pipe_byte_unlock(const int p[2])
{
    CHECK_EQ(write(p[1], "L", 1), 1);
}

static inline void install_handler(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

/* Runs this program again as `self child` (posix_spawn, stderr to a
 * pipe) and checks that it dies of SIGABRT with message on its stderr:
 * the runtime's refusal of something unsupported. */
static inline void child_aborts_with(const char *self, const char *message)
{
    extern char **environ;
    int errp[2];
    CHECK_EQ(pipe(errp), 0);
    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, errp[1], 2), 0);
    char *args[] = { (char *)self, "child", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    CHECK_EQ(close(errp[1]), 0);
    char err[4096];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof err - 1 && (r = read(errp[0], err + got, sizeof err - 1 - got)) > 0)
        got += (size_t)r;
    err[got] = '\0';
    CHECK_EQ(close(errp[0]), 0);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fprintf(stderr, "child status %#x, stderr: %s\n", status, err);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(err, message) != NULL);
}

/* Whether fd's open file is non-blocking in the kernel (not the
 * application's view, which the fcntl wrapper reports). */
static inline int kernel_nonblock(int fd)
{
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    CHECK_GE(fl, 0);
    return (fl & O_NONBLOCK) != 0;
}

/* Makes a FIFO at a fresh name in /tmp, written to path (32 bytes). */
static inline void temp_fifo(char path[32])
{
    snprintf(path, 32, "/tmp/capriccio-fifo-XXXXXX");
    int t = mkstemp(path);
    CHECK_GE(t, 0);
    CHECK_EQ(close(t), 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(mkfifo(path, 0600), 0);
}

/* A new empty regular file under /tmp, already unlinked; extra: more
 * open flags (O_APPEND, O_DSYNC...), as mkostemp takes them. */
static inline int unlinked_temp_file(int extra)
{
    char path[] = "/tmp/capriccio-test-XXXXXX";
    int fd = mkostemp(path, extra);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    return fd;
}

/* Whether /tmp's file system is one whose buffered writes refuse
 * RWF_NOWAIT (EOPNOTSUPP) and that io/disk.c counts as local (ext4,
 * tmpfs): where it makes buffered writes on the worker ("Buffered
 * writes"). Tests of that skip (77) elsewhere. */
static inline bool tmp_refuses_nowait_writes(void)
{
    int probe = unlinked_temp_file(0);
    struct statfs sf;
    CHECK_EQ(fstatfs(probe, &sf), 0);
    struct iovec one = { "x", 1 };
    bool refused = pwritev2(probe, &one, 1, 0, RWF_NOWAIT) == -1 && errno == EOPNOTSUPP;
    CHECK_EQ(close(probe), 0);
    return refused && (sf.f_type == EXT4_SUPER_MAGIC || sf.f_type == TMPFS_MAGIC);
}

/* A watchdog for tests of calls that must time out: unless *done is set
 * within about 20 s, it feeds the socket pair's first end both ways (a
 * byte to read, and room to write: what the second end holds is
 * drained), so a call that wrongly waits for good returns and the test's
 * checks fail instead of the test hanging. Run with spawn(); set *done
 * and join it at the end. */
struct socket_watchdog {
    const int *sv;
    atomic_int *done;
};

static inline void *socket_watchdog_run(void *arg)
{
    const struct socket_watchdog *wd = arg;
    for (int i = 0; i < 2000 && !atomic_load(wd->done); i++)
        cap_usleep(10000);
    if (!atomic_load(wd->done)) {
        static char sink[1 << 20];
        CHECK_EQ(write(wd->sv[1], "x", 1), 1);
        while (recv(wd->sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
    }
    return NULL;
}

/* Raises the soft descriptor limit to the hard one (and, as root, the hard
 * one to `want` when it is lower). Returns the soft limit now in force. */
static inline long raise_nofile(long want)
{
    struct rlimit r;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
    if ((long)r.rlim_max < want) {
        struct rlimit more = { (rlim_t)want, (rlim_t)want };
        if (setrlimit(RLIMIT_NOFILE, &more) == 0)
            return want;
    }
    r.rlim_cur = r.rlim_max;
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &r), 0);
    return (long)r.rlim_cur;
}

/* Where the runtime keeps its own descriptors (io/ownfd.c): [*base, *top)
 * with top = min(soft RLIMIT_NOFILE, 1024) and base = top - 64. False
 * when the limit is too small to keep any apart (they then stay where
 * the kernel put them): the caller skips. */
static inline bool own_fd_range(int *base, int *top)
{
    enum { HIGH_CAP = 1024, HIGH_GAP = 64 };
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rlim_t t = rl.rlim_cur < HIGH_CAP ? rl.rlim_cur : HIGH_CAP;
    if (t < 2 * HIGH_GAP)
        return false;
    *top = (int)t;
    *base = (int)(t - HIGH_GAP);
    return true;
}

#endif /* CAP_TESTS_IO_UTIL_H */

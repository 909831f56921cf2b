/* SPDX-License-Identifier: MIT */
/*
 * The server's life: listen, accept, one detached thread per connection,
 * and graceful shutdown.
 *
 * Registry: every live connection is on `conns`, counted by nconns, under
 * `lock`; at most max_conn at once, the rest get 503 from a short-lived
 * rejecting thread (at most MAX_REJECTING of those; beyond that the 503 is
 * written by the acceptor itself and the socket closed at once).
 *
 * Shutdown: a signal handler only writes a byte to a self-pipe (with the raw
 * write system call, so that a thread library that intercepts write() is
 * never entered from a signal handler). The watcher thread reading that
 * pipe then, under `lock`: sets `stopping`, cuts the input (shutdown
 * SHUT_RD) of every connection that is idle between requests, which wakes
 * its thread with end-of-input; and shuts the listening socket, which wakes
 * the acceptor. Busy connections finish their response and then see
 * `stopping`. A connection's `state` (conn.h) is an atomic its own thread
 * moves between BUSY and IDLE, two atomic operations per request instead
 * of a lock taken twice: going idle stores IDLE and then loads `stopping`,
 * while the watcher stores `stopping` and then moves each IDLE connection
 * to CUTTING (compare-and-swap, all sequentially consistent), so one of
 * the two sees the other: none can start waiting after the cut without
 * seeing `stopping`. The watcher cuts under `lock` and puts IDLE back;
 * a thread that finds CUTTING when it wants BUSY waits for `lock`, so a
 * connection's fd, only closed once it is busy, is never shut down
 * closed (or reused). The main thread waits on
 * `all_done` until no connection is left, flushes the log, and returns 0.
 * The watcher also flushes the access log about once a second.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cache.h"
#include "knot.h"
#include "log.h"
#include "response.h"

#define MAX_REJECTING 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static struct conn conns = { .prev = &conns, .next = &conns }; /* list head */
static int nconns, nrejecting;
static atomic_bool stopping;
static int listen_fd = -1;
static int sig_pipe[2] = { -1, -1 };

bool server_stopping(void)
{
    return atomic_load_explicit(&stopping, memory_order_relaxed);
}

bool server_conn_idle(struct conn *c)
{
    atomic_store(&c->state, CONN_IDLE); /* before the load: header comment */
    return !atomic_load(&stopping);
}

void server_conn_busy(struct conn *c)
{
    for (;;) {
        int s = CONN_IDLE;
        if (atomic_compare_exchange_strong(&c->state, &s, CONN_BUSY) || s == CONN_BUSY)
            return;
        /* CUTTING: begin_shutdown, under lock, puts IDLE back. */
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
    }
}

/* Caller holds lock. */
static void maybe_all_done(void)
{
    if (nconns == 0 && nrejecting == 0)
        pthread_cond_broadcast(&all_done);
}

static int start_thread(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, knot_config.stack_bytes);
    int err = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return err;
}

static void *conn_thread(void *arg)
{
    struct conn *c = arg;
    enum conn_end end = conn_serve(c);
    server_conn_busy(c);
    if (end == CONN_LINGER)
        lingering_close(c->fd);
    else
        close(c->fd);

    pthread_mutex_lock(&lock);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    nconns--;
    maybe_all_done();
    pthread_mutex_unlock(&lock);
    free(c);
    return NULL;
}

static void *reject_thread(void *arg)
{
    struct conn *c = arg;
    long long bytes = 0;
    if (response_error(c->fd, 503, 1, false, false, &bytes) == 0) {
        log_request(c->peer, NULL, NULL, 1, 503, bytes);
        lingering_close(c->fd);
    } else {
        close(c->fd);
    }
    free(c);
    pthread_mutex_lock(&lock);
    nrejecting--;
    maybe_all_done();
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Over the connection limit: 503, preferably from a thread that can wait
 * for the client to read it. */
static void reject(struct conn *c)
{
    pthread_mutex_lock(&lock);
    bool threaded = nrejecting < MAX_REJECTING;
    if (threaded)
        nrejecting++;
    pthread_mutex_unlock(&lock);
    if (threaded && start_thread(reject_thread, c) == 0)
        return;
    if (threaded) {
        pthread_mutex_lock(&lock);
        nrejecting--;
        maybe_all_done();
        pthread_mutex_unlock(&lock);
    }
    long long bytes = 0;
    response_error(c->fd, 503, 1, false, false, &bytes); /* a fresh socket: never blocks */
    close(c->fd);
    free(c);
}

/* A connection with its input buffer behind it (conn.h); only the struct
 * is zeroed, the buffer is written before it is read. */
static struct conn *conn_new(int fd)
{
    size_t cap = conn_buffer_bytes();
    struct conn *c = malloc(sizeof *c + cap);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->buf = c->data;
    c->cap = cap;
    return c;
}

static void accept_one(int fd, const struct sockaddr_storage *ss)
{
    struct conn *c = conn_new(fd);
    if (!c) {
        close(fd);
        return;
    }
    c->read_wait_ms = knot_read_wait_ms(); /* inherited from the listener */
    atomic_init(&c->state, CONN_BUSY); /* until its thread waits for a request */
    if (ss->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, c->peer, sizeof c->peer);
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, c->peer, sizeof c->peer);

    pthread_mutex_lock(&lock);
    bool room = nconns < knot_config.max_conn;
    if (room) {
        c->next = conns.next;
        c->prev = &conns;
        conns.next->prev = c;
        conns.next = c;
        nconns++;
    }
    pthread_mutex_unlock(&lock);
    if (!room) {
        reject(c);
        return;
    }
    if (start_thread(conn_thread, c) == 0)
        return;
    pthread_mutex_lock(&lock); /* no thread to be had: take it back, 503 */
    c->prev->next = c->next;
    c->next->prev = c->prev;
    nconns--;
    maybe_all_done();
    pthread_mutex_unlock(&lock);
    reject(c);
}

static void accept_loop(void)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept(listen_fd, (struct sockaddr *)&ss, &len);
        if (server_stopping()) {
            if (fd >= 0)
                close(fd);
            return;
        }
        if (fd >= 0) {
            accept_one(fd, &ss);
            continue;
        }
        /* EAGAIN: the listener's SO_RCVTIMEO (set there for the
         * connections to inherit) bounds accept() too; a quiet spell,
         * not an error. */
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == EAGAIN ||
            errno == EWOULDBLOCK)
            continue;
        /* Out of descriptors or memory, or stranger: wait a little rather
         * than spin; the condition usually passes as connections close. */
        if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
            perror("knot: accept");
        poll(NULL, 0, 10);
    }
}

static void begin_shutdown(void)
{
    pthread_mutex_lock(&lock);
    atomic_store(&stopping, true);
    for (struct conn *c = conns.next; c != &conns; c = c->next) {
        int s = CONN_IDLE;
        if (atomic_compare_exchange_strong(&c->state, &s, CONN_CUTTING)) {
            shutdown(c->fd, SHUT_RD);
            atomic_store(&c->state, CONN_IDLE);
        }
    }
    pthread_mutex_unlock(&lock);
    shutdown(listen_fd, SHUT_RDWR); /* wakes accept() with an error */
}

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    syscall(SYS_write, sig_pipe[1], &b, 1); /* raw: see the header comment */
    errno = saved;
}

static void *watch_signals(void *arg)
{
    for (;;) {
        struct pollfd p = { .fd = sig_pipe[0], .events = POLLIN };
        int r = poll(&p, 1, 1000);
        if (r <= 0) {
            log_flush();
            continue;
        }
        unsigned char b;
        if (read(sig_pipe[0], &b, 1) != 1)
            continue;
        if (server_stopping()) {
            static const char msg[] = "knot: second signal, exiting at once\n";
            (void)!write(2, msg, sizeof msg - 1);
            log_flush();
            _exit(1);
        }
        fprintf(stderr, "knot: signal %d, finishing responses in flight\n", b);
        begin_shutdown();
    }
    return NULL;
}

static int setup_signals(void)
{
    if (pipe(sig_pipe))
        return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC);
        fcntl(sig_pipe[i], F_SETFL, O_NONBLOCK);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL); /* a vanished client is EPIPE, not death */
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return 0;
}

/* Every connection needs a descriptor: raise the soft limit to the hard one
 * and keep max_conn below it. */
static void fit_descriptor_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    /* listen socket, pipes, log, files being sent, the cache's descriptors */
    rlim_t reserve = 64 + (knot_config.cache_bytes ? CACHE_MAX_FILES : 0);
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)knot_config.max_conn + reserve > rl.rlim_cur) {
        int fit = rl.rlim_cur > reserve * 2 ? (int)(rl.rlim_cur - reserve) : (int)(rl.rlim_cur / 2);
        fprintf(stderr, "knot: --max-conn %d exceeds the descriptor limit %llu; using %d\n",
                knot_config.max_conn, (unsigned long long)rl.rlim_cur, fit);
        knot_config.max_conn = fit;
    }
}

/* Options every accepted socket inherits from the listener (Linux copies
 * them at accept), so a connection costs no setsockopt of its own: the
 * send and receive timeouts (response.c, conn.c) and TCP_NODELAY, since a
 * response goes out in one writev, or a head and then sendfile, and must
 * not wait for the client's delayed ACK. */
static int set_inherited_options(int fd)
{
    struct timeval snd = { knot_config.send_timeout_ms / 1000, knot_config.send_timeout_ms % 1000 * 1000 };
    long long r = knot_read_wait_ms();
    struct timeval rcv = { (time_t)(r / 1000), (suseconds_t)(r % 1000 * 1000) };
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd) ||
           setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv) ||
           setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int open_listener(char *url, size_t urlsz)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, knot_config.addr, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)knot_config.port);
        len = sizeof *in4;
    } else if (inet_pton(AF_INET6, knot_config.addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)knot_config.port);
        len = sizeof *in6;
    } else {
        fprintf(stderr, "knot: --addr '%s' is not an IPv4 or IPv6 address\n", knot_config.addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) || set_inherited_options(fd) ||
        bind(fd, (struct sockaddr *)&ss, len) || listen(fd, knot_config.backlog) ||
        getsockname(fd, (struct sockaddr *)&ss, &len)) {
        fprintf(stderr, "knot: cannot listen on %s port %d: %s\n", knot_config.addr,
                knot_config.port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int port = ntohs(ss.ss_family == AF_INET6 ? in6->sin6_port : in4->sin_port);
    snprintf(url, urlsz, ss.ss_family == AF_INET6 ? "http://[%s]:%d/" : "http://%s:%d/",
             knot_config.addr, port);
    return fd;
}

int server_run(void)
{
    char url[128];
    fit_descriptor_limit();
    listen_fd = open_listener(url, sizeof url);
    if (listen_fd < 0)
        return 1;
    if (setup_signals() || start_thread(watch_signals, NULL)) {
        fprintf(stderr, "knot: cannot set up signal handling\n");
        return 1;
    }
    /* The ready line: tests and scripts read the port from it. */
    printf("knot: serving %s at %s\n", knot_config.root, url);
    fflush(stdout);

    accept_loop();

    pthread_mutex_lock(&lock);
    while (nconns > 0 || nrejecting > 0)
        pthread_cond_wait(&all_done, &lock);
    pthread_mutex_unlock(&lock);
    close(listen_fd);
    log_close();
    fprintf(stderr, "knot: stopped\n");
    return 0;
}

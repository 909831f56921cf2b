/* SPDX-License-Identifier: MIT */
/* Description: close() of a TCP socket that lingers (SO_LINGER with a
 * timeout, data the peer has not taken) where the runtime cannot make
 * the wait itself (intercept/linger.c) still lets the worker's other
 * threads run: the close of a duplicated socket's last number, and of a
 * socket made past the runtime with lingering set by a raw system call.
 * Linux waits in the close whatever O_NONBLOCK says; such closes used to
 * wait on the worker (a yielding ticker did not move for the 1 s
 * timeout on one worker). The close of a number that is not its file's
 * last returns at once, as in the kernel. Each close returns 0, and what
 * was left reaches the peer afterwards, then EOF. A signal sent to the
 * thread waiting in such a close ends the wait, as a signal ends the
 * kernel's (a 100 s timeout: a wait the signal did not end outlasts the
 * test's timeout); its handler runs in that thread. */
#include "io/io_util.h"

static struct ticker ticker;
static int port;

static void raw_set_linger(int c, int seconds)
{
    struct linger lg = { .l_onoff = 1, .l_linger = seconds };
    CHECK_EQ(syscall(SYS_setsockopt, c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
}

static void set_linger(int c, int seconds)
{
    struct linger lg = { .l_onoff = 1, .l_linger = seconds };
    CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
}

/* close(c) lets the ticker run, returns 0, and s then reads sent bytes. */
static void close_parks(int c, int s, size_t sent)
{
    long before = atomic_load(&ticker.ticks);
    CHECK_EQ(close(c), 0);
    CHECK_GT(atomic_load(&ticker.ticks), before);
    CHECK_EQ(read_to_eof(s), sent);
    CHECK_EQ(close(s), 0);
}

/* ---- a signal ends the wait -------------------------------------------- */

static atomic_int closing, closed;
static volatile sig_atomic_t usr1s;
static cap_thread_t usr1_in, closer;

static void on_usr1(int sig)
{
    (void)sig;
    usr1s++;
    usr1_in = cap_thread_self();
}

static void *close_it(void *arg)
{
    atomic_store(&closing, 1);
    CHECK_EQ(close((int)(intptr_t)arg), 0);
    atomic_store(&closed, 1);
    return NULL;
}

int main(void)
{
    cap_thread_t tt = spawn(ticker_run, &ticker);
    while (atomic_load(&ticker.ticks) == 0)
        cap_yield();
    int l = tcp_listener(SOCK_STREAM, 4, &port);

    /* A duplicated socket: the first close is not the last, the second
     * lingers. */
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    int d = dup(c);
    CHECK_GE(d, 0);
    size_t sent = fill_socket(c);
    set_linger(d, 1);
    CHECK_EQ(close(d), 0);
    close_parks(c, s, sent);

    /* Made past the runtime, lingering set past it too. */
    c = raw_tcp_connect(port, NULL);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    sent = fill_socket(c);
    raw_set_linger(c, 1);
    close_parks(c, s, sent);

    /* A signal to the closing thread ends the wait. */
    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    c = tcp_connect(port);
    CHECK_GE(c, 0);
    s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    d = dup(c);
    CHECK_GE(d, 0);
    sent = fill_socket(c);
    set_linger(c, 100);
    CHECK_EQ(close(d), 0);
    closer = spawn(close_it, (void *)(intptr_t)c);
    while (!atomic_load(&closing))
        cap_yield();
    /* Until the close returns: a signal that came before the close began
     * only ran the handler. */
    while (!atomic_load(&closed)) {
        CHECK_EQ(cap_thread_kill(closer, SIGUSR1), 0);
        cap_sleep_ns(20 * 1000 * 1000);
    }
    join(closer);
    CHECK_GE(usr1s, 1);
    CHECK(cap_thread_equal(usr1_in, closer));
    CHECK_EQ(read_to_eof(s), sent);
    CHECK_EQ(close(s), 0);

    atomic_store(&ticker.stop, 1);
    join(tt);
    close(l);
    return 0;
}

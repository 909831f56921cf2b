/* SPDX-License-Identifier: MIT */
/* Description: a blocking signalfd read parked in one thread is woken by
 * pthread_kill of that thread with a signal of the signalfd's mask that
 * the thread blocks, and returns it (SI_TKILL, the sender's pid), as on
 * NPTL; taken so, it is no longer pending for the thread. Each round
 * sends one, whether the reader has parked yet or not, before and after
 * the program installs a handler (a thread parked before the first one
 * is not in the signal registry), and meanwhile a ticker keeps running.
 * A signal outside the mask that the thread accepts still runs its
 * handler, and the read goes on.
 * Before, the read stayed parked (the watchdog ended the test): the
 * signal waited in the thread's own pending set, which the kernel's
 * signalfd does not read, and nothing woke the read. */
#include <signal.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { ROUNDS = 200 };

static int fd;
static atomic_int reading, got, handled;

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&reading, i + 1);
        struct signalfd_siginfo si;
        CHECK_EQ(read(fd, &si, sizeof si), (ssize_t)sizeof si);
        CHECK_EQ(si.ssi_signo, (uint32_t)SIGUSR1);
        CHECK_EQ(si.ssi_code, SI_TKILL);
        CHECK_EQ(si.ssi_pid, (uint32_t)getpid());
        sigset_t p;
        CHECK_EQ(sigpending(&p), 0);
        CHECK_EQ(sigismember(&p, SIGUSR1), 0);
        atomic_store(&got, i + 1);
    }
    return NULL;
}

int main(void)
{
    alarm(50); /* a read never woken ends the test */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    fd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    static struct ticker tk;
    cap_thread_t t = spawn(ticker_run, &tk);
    cap_thread_t r = spawn(reader, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        if (i == ROUNDS / 2)
            install_handler(SIGUSR2, on_usr2, SA_RESTART);
        send_when_waiting(r, SIGUSR1, &reading, i);
        if (i == ROUNDS / 2) {
            /* Outside the mask, and not blocked by the reader: its
             * handler runs there (SA_RESTART: the read goes on). */
            CHECK_EQ(cap_thread_kill(r, SIGUSR2), 0);
        }
        wait_past(&got, i);
    }
    join(r);
    CHECK_EQ(atomic_load(&handled), 1);
    atomic_store(&tk.stop, 1);
    join(t);
    CHECK_EQ(close(fd), 0);
    puts("ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: the runtime's kick (SIGURG, sent to a worker to install a
 * new signal mask or to deliver a thread's signal) does not fail a
 * system call the runtime does not see. Thread A blocks its worker in a
 * raw read(2) of a pipe (syscall(), which no interposition sees); then a
 * mask change that every thread now blocks kicks that worker, and
 * pthread_kill of a signal A accepts does too (A is running, to the
 * runtime), whose handler (SA_RESTART) runs in A. A's read goes on and returns the byte main writes afterwards.
 * Before, the kick was installed without SA_RESTART and the read failed
 * with EINTR. The program's own SIGURG handler, installed without
 * SA_RESTART, still interrupts such a call (EINTR), and with SA_RESTART
 * does not. Two workers: A holds one of them. */
#include <signal.h>
#include <sys/syscall.h>

#include "io/io_util.h"

static int p[2];
static atomic_int reading;
static volatile sig_atomic_t urgs;

static sigset_t one(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    return s;
}

static void on_urg(int sig)
{
    (void)sig;
    urgs++;
}

static atomic_long kthread;

/* Blocks its worker in a read the runtime does not see; returns the
 * result (the byte, or -errno). */
static void *raw_reader(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    kthread = syscall(SYS_gettid);
    char c = 0;
    atomic_store(&reading, 1);
    long n = syscall(SYS_read, p[0], &c, 1);
    atomic_store(&reading, 0);
    return (void *)(n == 1 ? (long)c : -errno);
}

/* Starts A on the other worker: main does not yield until A runs. */
static cap_thread_t start_reader(void)
{
    atomic_store(&reading, 0);
    cap_thread_t a = spawn(raw_reader, NULL);
    while (!atomic_load(&reading))
        ;
    CHECK_NE(kthread, syscall(SYS_gettid));
    cap_usleep(20000); /* in the read, most likely (either way is right) */
    return a;
}

int main(void)
{
    /* Made past the runtime, so blocking: its own pipes are non-blocking
     * underneath. */
    CHECK_EQ(syscall(SYS_pipe2, p, 0), 0);
    sigset_t s = one(SIGUSR2);

    /* A mask change's kick: A blocks SIGUSR2, main is the last. */
    cap_thread_t a = start_reader();
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    cap_usleep(20000);
    CHECK_EQ(syscall(SYS_write, p[1], "a", 1), 1);
    CHECK_EQ((long)join(a), 'a');

    /* A signal sent to A while it runs (to the runtime): delivered in A
     * by a kick; the handler has SA_RESTART, so the read goes on. */
    install_handler(SIGURG, on_urg, SA_RESTART);
    a = start_reader();
    CHECK_EQ(cap_thread_kill(a, SIGURG), 0); /* A accepts it: kicked, handled in A */
    while (urgs == 0)
        cap_usleep(1000);
    CHECK_EQ(syscall(SYS_write, p[1], "b", 1), 1);
    CHECK_EQ((long)join(a), 'b');

    /* The program's own SIGURG without SA_RESTART interrupts the read. */
    install_handler(SIGURG, on_urg, 0);
    a = start_reader();
    int before = urgs;
    while (atomic_load(&reading)) {
        CHECK_EQ(syscall(SYS_tgkill, getpid(), kthread, SIGURG), 0);
        cap_usleep(5000);
    }
    CHECK_EQ((long)join(a), -EINTR);
    CHECK_GT(urgs, before);
    return 0;
}

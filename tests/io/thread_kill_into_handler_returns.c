/* SPDX-License-Identifier: MIT */
/* Description: pthread_kill of a signal that the target thread's running
 * handler holds (the handler's sa_mask) returns at once, as POSIX says,
 * and the signal is delivered in the target as that handler returns.
 * Thread A computes on the other worker; main sends it SIGUSR1, whose
 * handler blocks SIGUSR2 and spins until main lets it go; main sends
 * SIGUSR2 meanwhile. Before, the sender waited for the handler to end, so
 * here (the handler waits for the sender) neither ever went on. Twice:
 * once with A computing, once with A inside a call registered for
 * signals (a read of a pipe, which SIGUSR1's SA_RESTART handler lets go
 * on), where SIGUSR2 (no SA_RESTART) then ends the read with EINTR. Two
 * workers: A holds one of them. */
#include <signal.h>
#include <sys/syscall.h>

#include "io/io_util.h"

static atomic_int running, in_usr1, let_go, stop;
static _Atomic cap_thread_t usr2_in;
static atomic_int usr2_runs, usr2_saw_usr1_over;
static atomic_long kthread;
static int p[2];

static void on_usr1(int sig)
{
    (void)sig;
    atomic_store(&in_usr1, 1);
    while (!atomic_load(&let_go))
        ; /* SIGUSR2 is held meanwhile (sa_mask) */
    atomic_store(&in_usr1, 0);
}

static void on_usr2(int sig)
{
    (void)sig;
    usr2_in = cap_thread_self();
    atomic_store(&usr2_saw_usr1_over, !atomic_load(&in_usr1));
    atomic_fetch_add(&usr2_runs, 1);
}

static void *computer(void *arg)
{
    (void)arg;
    kthread = syscall(SYS_gettid);
    atomic_store(&running, 1);
    while (!atomic_load(&stop))
        ; /* no call, no yield: only a kick reaches it */
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    kthread = syscall(SYS_gettid);
    atomic_store(&running, 1);
    char c;
    errno = 0;
    long r = read(p[0], &c, 1);
    return (void *)(r == -1 ? (long)-errno : r);
}

/* Starts t's function on the other worker: main does not yield until it
 * runs. */
static cap_thread_t start(void *(*fn)(void *))
{
    atomic_store(&running, 0);
    cap_thread_t t = spawn(fn, NULL);
    while (!atomic_load(&running))
        ;
    CHECK_NE(kthread, syscall(SYS_gettid));
    return t;
}

static void round_trip(cap_thread_t a)
{
    atomic_store(&in_usr1, 0);
    atomic_store(&let_go, 0);
    atomic_store(&usr2_runs, 0);
    CHECK_EQ(cap_thread_kill(a, SIGUSR1), 0);
    while (!atomic_load(&in_usr1))
        cap_usleep(1000);
    CHECK_EQ(cap_thread_kill(a, SIGUSR2), 0); /* returns: the handler still runs */
    CHECK_EQ(atomic_load(&usr2_runs), 0);
    atomic_store(&let_go, 1);
    while (atomic_load(&usr2_runs) == 0)
        cap_usleep(1000);
    CHECK_EQ(atomic_load(&usr2_runs), 1);
    CHECK_EQ(usr2_in, a);
    CHECK_EQ(atomic_load(&usr2_saw_usr1_over), 1);
}

int main(void)
{
    install_handler(SIGUSR2, on_usr2, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

    cap_thread_t a = start(computer);
    for (int i = 0; i < 3; i++)
        round_trip(a);
    atomic_store(&stop, 1);
    join(a);

    CHECK_EQ(pipe(p), 0);
    a = start(reader);
    cap_usleep(20000); /* parked in the read, most likely: either way is right */
    round_trip(a);
    CHECK_EQ((long)join(a), -EINTR);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: in a program built without <capriccio/pthread.h> (so
 * also one preloaded), main is the only user thread and its other
 * threads are glibc's; glibc's pthread_self() in main gives the handle of
 * the initial kernel thread, worker 0's. glibc's pthread_kill and
 * pthread_sigqueue with that handle reach main, the user thread, as on
 * NPTL:
 *  - a handler without SA_RESTART interrupts main's blocking read, which
 *    fails with EINTR (before: the signal went to worker 0's kernel
 *    thread, whatever ran there, and the read waited for good);
 *  - a signal main blocks is taken by its sigwait, and a queued value by
 *    its sigwaitinfo (before: pending on that kernel thread, which on two
 *    workers looked only when it next woke for other work);
 *  - a send to a glibc thread's handle still reaches that thread.
 * A watchdog alarm (default action) ends a run that hangs. */
#include <pthread.h>

#include "io/io_util.h"

static pthread_t main_glibc;
static cap_thread_t main_cap;
static volatile sig_atomic_t handled, handled_on_main, handled_on_other;
static pthread_t other;
static atomic_int other_ready, other_stop;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
    if (cap_thread_self() == main_cap)
        handled_on_main++;
    if (pthread_equal(pthread_self(), other))
        handled_on_other++;
}

static void *send_later(void *arg)
{
    int how = (int)(intptr_t)arg;
    usleep(20000); /* main is in its call by then, or the signal waits */
    if (how == 0) {
        CHECK_EQ(pthread_kill(main_glibc, SIGUSR1), 0);
    } else if (how == 1) {
        CHECK_EQ(pthread_kill(main_glibc, SIGUSR2), 0);
    } else {
        union sigval v = { .sival_int = 42 };
        CHECK_EQ(pthread_sigqueue(main_glibc, SIGRTMIN + 2, v), 0);
    }
    return NULL;
}

static void *spin_until_told(void *arg)
{
    (void)arg;
    atomic_store(&other_ready, 1);
    while (!atomic_load(&other_stop))
        usleep(1000);
    return NULL;
}

int main(void)
{
    alarm(30);
    main_glibc = pthread_self();
    main_cap = cap_thread_self();
    install_handler(SIGUSR1, on_usr1, 0);
    CHECK_EQ(pthread_kill(main_glibc, 0), 0); /* main exists */

    /* A blocking read, interrupted. */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, send_later, (void *)0), 0);
    char c;
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(handled, 1);
    CHECK_EQ(handled_on_main, 1);
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* Blocked signals, taken by main's waits. */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    sigaddset(&s, SIGRTMIN + 2);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    CHECK_EQ(pthread_create(&t, NULL, send_later, (void *)1), 0);
    int sig = 0;
    CHECK_EQ(sigwait(&s, &sig), 0);
    CHECK_EQ(sig, SIGUSR2);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(pthread_create(&t, NULL, send_later, (void *)2), 0);
    siginfo_t info;
    CHECK_EQ(sigwaitinfo(&s, &info), SIGRTMIN + 2);
    CHECK_EQ(info.si_code, SI_QUEUE);
    CHECK_EQ(info.si_value.sival_int, 42);
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* Another glibc thread's handle is that thread's. */
    CHECK_EQ(pthread_create(&other, NULL, spin_until_told, NULL), 0);
    while (!atomic_load(&other_ready))
        usleep(1000);
    CHECK_EQ(pthread_kill(other, SIGUSR1), 0);
    while (handled_on_other == 0)
        usleep(1000);
    CHECK_EQ(handled_on_main, 1);
    atomic_store(&other_stop, 1);
    CHECK_EQ(pthread_join(other, NULL), 0);
    puts("ok");
    return 0;
}

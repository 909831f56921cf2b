/* SPDX-License-Identifier: MIT */
/* Description: while every thread blocks SIGUSR1, a thread created with
 * a mask that accepts it, running on the other worker without ever
 * parking, gets a SIGUSR1 aimed at that worker's kernel thread (a tgkill
 * of its gettid(), as a timer with SIGEV_THREAD_ID sends): the creation
 * narrows the workers' common mask (io/sigmask.h, the target), and the
 * other worker installs it as the thread starts there
 * (cap__sigmask_catch_up). Before (session 65), a worker installed a
 * target that blocked less only when it next applied a mask, which a
 * thread that never parks does not let it do: the signal stayed pending
 * there for good (stacklinked/signal_jump_during_links hung so in 1 run
 * of 5 to 15 on two workers, its diver's timers held back). The
 * wait for the handler is bounded only to turn that into a message. Two
 * workers. */
#include <sys/syscall.h>

#include "io/io_util.h"

enum { BATCHES = 50, CANDIDATES = 8, WAIT_MS = 20000 };

static atomic_int got;
static atomic_int spinner_tid, spinner_index = -1, main_worker, started;
static atomic_int give_up;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_store(&got, 1);
}

/* The first candidate that starts on the other worker spins there,
 * never parking, until the handler ran in it; the others leave at once
 * (one that spun on main's worker would never let main run again). */
static void *candidate(void *arg)
{
    int expected = -1;
    bool mine = cap_worker_id() != atomic_load(&main_worker) &&
                atomic_compare_exchange_strong(&spinner_index, &expected, (int)(intptr_t)arg);
    if (mine)
        atomic_store(&spinner_tid, (int)syscall(SYS_gettid));
    atomic_fetch_add(&started, 1);
    if (!mine)
        return (void *)1;
    while (!atomic_load(&got) && !atomic_load(&give_up))
        ;
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    sigset_t usr1, open_mask;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    /* main is the only thread: every worker now blocks SIGUSR1. */
    CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, &open_mask), 0);
    atomic_store(&main_worker, cap_worker_id());
    cap_thread_attr_t attr;
    CHECK_EQ(cap_thread_attr_init(&attr), 0);
    CHECK_EQ(cap_thread_attr_setsigmask(&attr, &open_mask), 0);

    cap_thread_t t[CANDIDATES];
    int spinner = -1;
    for (int b = 0; b < BATCHES && spinner < 0; b++) {
        atomic_store(&started, 0);
        for (intptr_t i = 0; i < CANDIDATES; i++)
            CHECK_EQ(cap_thread_create(&t[i], &attr, candidate, (void *)i), 0);
        while (atomic_load(&started) < CANDIDATES)
            cap_sleep_ns(100000);
        spinner = atomic_load(&spinner_index);
        for (int i = 0; i < CANDIDATES; i++)
            if (i != spinner)
                CHECK_EQ(join(t[i]), (void *)1);
    }
    if (spinner < 0)
        SKIP("no thread started on the other worker");
    CHECK_EQ(syscall(SYS_tgkill, getpid(), atomic_load(&spinner_tid), SIGUSR1), 0);
    for (int ms = 0; !atomic_load(&got); ms++) {
        if (ms == WAIT_MS) {
            atomic_store(&give_up, 1);
            join(t[spinner]);
            fprintf(stderr, "SIGUSR1 stayed pending on the spinner's worker\n");
            return 1;
        }
        cap_sleep_ns(1000000);
    }
    CHECK(join(t[spinner]) == NULL);
    CHECK_EQ(cap_thread_attr_destroy(&attr), 0);
    return 0;
}

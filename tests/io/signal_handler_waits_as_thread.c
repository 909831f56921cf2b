/* SPDX-License-Identifier: MIT */
/* Description: a handler that a thread delivers to itself (a signal sent
 * to it, or kept for the process until it accepted it) and that waits on
 * a descriptor parks its thread instead of blocking the worker, so the
 * thread it waits for runs: libuv's signal lock, a byte in a pipe that
 * the handler reads and the loop threads, blocking every signal, hold.
 * Main blocks SIGUSR1, has one pending, and unblocks it while a thread
 * holds the lock (or sends it to the process, which the library delivers to
 * the sender as kill returns): the handler runs before the call returns,
 * and its read waits for the holder, which on one worker runs only if the
 * read does not block the worker (the old library hung here). Meanwhile
 * the holder sends main SIGUSR2, which the handler's sa_mask holds (run
 * after the handler, before pthread_sigmask returns), and SIGWINCH, which
 * it does not (run nested, inside the handler). A handler's poll and
 * sleeps park main the same way (a thread of the worker writes what the
 * poll waits for, and sets the flag a sleep loop waits for). Then the
 * pattern under
 * load: loop threads take the lock with every signal blocked and yield
 * while they hold it, and after each round signal themselves, with a
 * handler that takes the lock; every handler runs, and every thread
 * ends. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

static int lock_pipe[2];

static void pipe_lock(void)
{
    pipe_byte_lock(lock_pipe);
}

static void pipe_unlock(void)
{
    pipe_byte_unlock(lock_pipe);
}

/* ---- one handler that waits ------------------------------------------- */

static cap_thread_t main_self;
static atomic_int usr1_entered, usr1_done, usr1_runs;
static cap_thread_t usr1_ran_in;
static atomic_int usr2_runs, usr2_saw_done, winch_runs, winch_saw_done;

static void on_usr1_once(int sig)
{
    (void)sig;
    usr1_ran_in = cap_thread_self();
    atomic_store(&usr1_entered, 1);
    pipe_lock();
    atomic_fetch_add(&usr1_runs, 1);
    atomic_store(&usr1_done, 1);
    pipe_unlock();
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_store(&usr2_saw_done, atomic_load(&usr1_done));
    atomic_fetch_add(&usr2_runs, 1);
}

static void on_winch(int sig)
{
    (void)sig;
    atomic_store(&winch_saw_done, atomic_load(&usr1_done));
    atomic_fetch_add(&winch_runs, 1);
}

static atomic_int holding;
static atomic_long holder_turns; /* turns the holder took while main's handler waited */

static void *holder(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &all, NULL), 0);
    pipe_lock();
    atomic_store(&holding, 1);
    while (!atomic_load(&usr1_entered))
        cap_sleep_ns(200000);
    /* Main is in its handler, waiting for the lock (or about to). */
    for (int i = 0; i < 10; i++) {
        atomic_fetch_add(&holder_turns, 1);
        cap_sleep_ns(100000);
    }
    CHECK_EQ(cap_thread_kill(main_self, SIGUSR2), 0);
    CHECK_EQ(cap_thread_kill(main_self, SIGWINCH), 0);
    CHECK_EQ(atomic_load(&usr1_done), 0);
    pipe_unlock();
    return NULL;
}

/* by_kill: main sends SIGUSR1 to the process (delivered to the sender,
 * main, as kill returns: intercept/sigsend.c); else it has one pending
 * and unblocks it. */
static void one_wait(bool by_kill)
{
    atomic_store(&usr1_entered, 0);
    atomic_store(&usr1_done, 0);
    atomic_store(&usr1_runs, 0);
    atomic_store(&usr2_runs, 0);
    atomic_store(&winch_runs, 0);
    atomic_store(&usr2_saw_done, -1);
    atomic_store(&winch_saw_done, -1);
    atomic_store(&holding, 0);
    atomic_store(&holder_turns, 0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (!by_kill) {
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
        CHECK_EQ(cap_thread_kill(main_self, SIGUSR1), 0);
    }
    cap_thread_t h = spawn(holder, NULL);
    while (!atomic_load(&holding))
        cap_sleep_ns(200000);
    /* Delivered here, before this returns; its handler waits for the
     * holder, and so SIGUSR2 comes after it, SIGWINCH inside it. */
    if (by_kill)
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    else
        CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    CHECK_EQ(atomic_load(&usr1_runs), 1);
    CHECK(cap_thread_equal(usr1_ran_in, main_self));
    CHECK(atomic_load(&holder_turns) >= 10);
    CHECK_EQ(atomic_load(&usr2_runs), 1);
    CHECK_EQ(atomic_load(&usr2_saw_done), 1);
    CHECK_EQ(atomic_load(&winch_runs), 1);
    /* On one worker the holder runs only while main's handler waits as
     * main: sent then, it runs nested. On more, a send that finds main
     * still running its handler leaves it for the handler's end. */
    if (cap_worker_count() == 1)
        CHECK_EQ(atomic_load(&winch_saw_done), 0);
    join(h);
    /* The mask is main's own again: SIGUSR2 and SIGWINCH accepted. */
    sigset_t now;
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
    CHECK_EQ(sigismember(&now, SIGUSR1), 0);
    CHECK_EQ(sigismember(&now, SIGUSR2), 0);
    CHECK_EQ(sigismember(&now, SIGWINCH), 0);
}

/* ---- other waits: poll, and a sleep loop -------------------------------- */

static int poke_pipe[2];
static atomic_int flag, waits_done;

/* Waits in poll for the pipe's byte, then sleeps until the flag: both
 * things a thread of its worker does, which on one worker run only if
 * the handler's waits park main. */
static void on_usr1_polls(int sig)
{
    (void)sig;
    struct pollfd p = { .fd = poke_pipe[0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK(p.revents & POLLIN);
    while (!atomic_load(&flag))
        CHECK_EQ(usleep(200), 0);
    struct timespec ms = { 0, 1000000 };
    CHECK_EQ(nanosleep(&ms, NULL), 0);
    atomic_fetch_add(&waits_done, 1);
}

static void *poker(void *arg)
{
    (void)arg;
    cap_sleep_ns(2000000); /* main is in its handler's poll by now, or soon */
    CHECK_EQ(write(poke_pipe[1], "p", 1), 1);
    cap_sleep_ns(2000000);
    atomic_store(&flag, 1);
    return NULL;
}

static void other_waits(void)
{
    struct sigaction sa = { .sa_handler = on_usr1_polls, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(pipe(poke_pipe), 0);
    for (int i = 0; i < 10; i++) {
        atomic_store(&flag, 0);
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
        CHECK_EQ(cap_thread_kill(main_self, SIGUSR1), 0);
        cap_thread_t t = spawn(poker, NULL);
        CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
        CHECK_EQ(atomic_load(&waits_done), i + 1);
        join(t);
        char c;
        CHECK_EQ(read(poke_pipe[0], &c, 1), 1);
    }
    close(poke_pipe[0]);
    close(poke_pipe[1]);
}

/* ---- the pattern under load --------------------------------------------- */

enum { LOOPS = 6, ROUNDS = 400 };

static cap_thread_t loops[LOOPS];
static atomic_int blocking[LOOPS]; /* loop i blocks every signal now */
static atomic_int ran_where_blocked, stress_runs;

static void on_usr1_stress(int sig)
{
    (void)sig;
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < LOOPS; i++)
        if (cap_thread_equal(self, loops[i]) && atomic_load(&blocking[i]))
            atomic_store(&ran_where_blocked, 1);
    pipe_lock();
    atomic_fetch_add(&stress_runs, 1);
    pipe_unlock();
}

/* Each loop takes the lock with every signal blocked and is switched out
 * holding it; then signals itself, delivered at once, and its handler
 * waits for whichever loop holds the lock now, on one worker always one
 * switched out on the same worker. (Only signals a thread sends itself:
 * one sent to a thread running on another worker, or to the process, may
 * run its handler wherever that thread was interrupted, which cannot
 * wait as the thread: README, Limits.) */
static void *loop_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    sigset_t all, old;
    sigfillset(&all);
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
        atomic_store(&blocking[i], 1);
        pipe_lock();
        cap_yield(); /* switched out holding it, as an I/O turn may */
        pipe_unlock();
        atomic_store(&blocking[i], 0);
        CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
        CHECK_EQ(cap_thread_kill(cap_thread_self(), SIGUSR1), 0);
    }
    return NULL;
}

int main(void)
{
    main_self = cap_thread_self();
    CHECK_EQ(pipe(lock_pipe), 0);
    pipe_unlock(); /* the lock starts free */

    struct sigaction sa = { .sa_handler = on_usr1_once, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    install_handler(SIGWINCH, on_winch, SA_RESTART);
    for (int i = 0; i < 20; i++) {
        one_wait(false);
        one_wait(true);
    }
    other_waits();

    sa.sa_handler = on_usr1_stress;
    sigfillset(&sa.sa_mask); /* as libuv's */
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    for (int i = 0; i < LOOPS; i++)
        loops[i] = spawn(loop_thread, (void *)(intptr_t)i);
    for (int i = 0; i < LOOPS; i++)
        join(loops[i]);
    CHECK_EQ(atomic_load(&ran_where_blocked), 0);
    CHECK_EQ(atomic_load(&stress_runs), LOOPS * ROUNDS);
    /* The lock is free again: one byte in the pipe. */
    int avail = -1;
    CHECK_EQ(ioctl(lock_pipe[0], FIONREAD, &avail), 0);
    CHECK_EQ(avail, 1);
    return 0;
}

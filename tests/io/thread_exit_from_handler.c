/* SPDX-License-Identifier: MIT */
/* Description: a thread whose signal handler calls pthread_exit (the
 * old way to end a thread from outside: glibc lets a handler unwind the
 * thread it interrupted) ends there, its join returns the handler's
 * value, and its kernel thread is not left "in a handler" or with the
 * signal blocked: afterwards the threads of that worker still park in
 * blocking calls (a raw read would block the only worker: the test would
 * hang), and a second signal sent to another thread still reaches its
 * handler and interrupts its read with EINTR. The threads are ended
 * inside their reads (the exit is made as the read returns, its records
 * gone) or before them, and a spinning thread outside every call (the
 * exit goes on at once from the handler). */
#include <signal.h>
#include <stdbool.h>

#include "io/io_util.h"

enum { THREADS = 16, ROUNDS = 4 };

static atomic_int in_read, handled;

static void exit_now(int sig)
{
    (void)sig;
    cap_thread_exit((void *)(intptr_t)42);
}

static void count(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void set_handler(void (*fn)(int))
{
    struct sigaction sa = { .sa_handler = fn };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}


struct slot {
    int p[2];
    cap_thread_t t;
    atomic_bool done;
};

static void *reader_slot(void *arg)
{
    struct slot *s = arg;
    char c;
    atomic_fetch_add(&in_read, 1);
    ssize_t n = read(s->p[0], &c, 1);
    int e = errno;
    atomic_store(&s->done, true);
    return (void *)(intptr_t)(n == 1 ? c : n < 0 ? -e : 1000);
}

static bool lone_worker;

/* Never yields with two workers (where main, which does not yield
 * either, keeps the other): only a kick reaches it, and the handler
 * finds it running its own code, outside every call. */
static void *spinner(void *arg)
{
    atomic_bool *started = arg;
    atomic_store(started, true);
    for (unsigned long i = 1;; i++)
        if (lone_worker && i % (1ul << 20) == 0) /* lets main run */
            cap_yield();
    return NULL;
}

int main(void)
{
    static struct slot slots[THREADS];
    const char *w = getenv("CAP_WORKERS");
    lone_worker = w == NULL || atoi(w) == 1;
    for (int r = 0; r < ROUNDS; r++) {
        /* Ended by their handlers, wherever the signal finds them. */
        set_handler(exit_now);
        for (int i = 0; i < THREADS; i++) {
            CHECK_EQ(pipe(slots[i].p), 0);
            atomic_store(&slots[i].done, false);
            slots[i].t = spawn(reader_slot, &slots[i]);
        }
        for (int i = 0; i < THREADS; i++)
            CHECK_EQ(cap_thread_kill(slots[i].t, SIGUSR1), 0);
        for (int i = 0; i < THREADS; i++) {
            CHECK_EQ((intptr_t)join(slots[i].t), 42);
            CHECK(!atomic_load(&slots[i].done));
        }
        /* A thread running its own code, outside every call. */
        atomic_bool started = false;
        cap_thread_t t = spawn(spinner, &started);
        if (r % 2 == 1) /* else signalled before it first runs */
            while (!atomic_load(&started))
                if (lone_worker)
                    cap_yield();
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        CHECK_EQ((intptr_t)join(t), 42);
        /* The workers still park blocking calls: ended by writes. */
        atomic_store(&in_read, 0);
        for (int i = 0; i < THREADS; i++)
            slots[i].t = spawn(reader_slot, &slots[i]);
        while (atomic_load(&in_read) < THREADS)
            cap_usleep(100);
        for (int i = 0; i < THREADS; i++)
            CHECK_EQ(write(slots[i].p[1], "a", 1), 1);
        for (int i = 0; i < THREADS; i++)
            CHECK_EQ((intptr_t)join(slots[i].t), 'a');
        /* And the same signal still reaches a handler that returns: the
         * read it interrupts fails with EINTR (no SA_RESTART). */
        set_handler(count);
        for (int i = 0; i < THREADS; i++) {
            atomic_store(&slots[i].done, false);
            slots[i].t = spawn(reader_slot, &slots[i]);
        }
        for (int i = 0; i < THREADS; i++) {
            int before = atomic_load(&handled);
            while (!atomic_load(&slots[i].done)) {
                CHECK_EQ(cap_thread_kill(slots[i].t, SIGUSR1), 0);
                cap_usleep(1000);
            }
            CHECK(atomic_load(&handled) > before);
            CHECK_EQ((intptr_t)join(slots[i].t), -EINTR);
        }
        for (int i = 0; i < THREADS; i++) {
            close(slots[i].p[0]);
            close(slots[i].p[1]);
        }
    }
    return 0;
}

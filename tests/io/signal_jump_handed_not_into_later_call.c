/* SPDX-License-Identifier: MIT */
/* Description: a handler that interrupts a thread inside an async-signal-
 * safe call's runtime code and siglongjmps has its jump handed to the
 * thread and made as the call returns (io/sigsafe.h); the delivery is
 * marked to interrupt the thread's call whatever SA_RESTART says. Once
 * the jump is made that call is over: a later call of the thread, entered
 * after the delivery and after the jump, is not the one the signal came
 * in, and a read of a pipe with an SA_RESTART handler must not fail with
 * EINTR. The old code interrupted whatever call of the thread the
 * dispatch found registered when it ran, which is the next read that
 * parks (the dispatch runs as the worker looks at its events: when the
 * thread parks).
 *
 * The signal is queued to this kernel thread while the thread blocks it,
 * then let in by pthread_sigmask (an async-signal-safe call): the handler
 * runs inside it, numbered as a process signal (SI_QUEUE), deterministic
 * on every backend. */
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 200 };

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static int p[2];

static void jump_back(int sig)
{
    (void)sig;
    if (!armed)
        return;
    armed = 0;
    siglongjmp(env, 1);
}

static void *write_byte(void *arg)
{
    (void)arg;
    char c = 'w';
    CHECK_EQ(write(p[1], &c, 1), 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    install_handler(SIGALRM, jump_back, SA_RESTART);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &alrm, NULL), 0);
    static volatile int round; /* kept across the jumps */
    for (round = 0; round < ROUNDS; round++) {
        if (sigsetjmp(env, 1) == 0) { /* saved with SIGALRM blocked */
            armed = 1;
            CHECK_EQ(queue_here(SIGALRM), 0);
            /* The handler runs in here; its jump is made as it returns. */
            (void)pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
            CHECK(!"the handler's jump was not made");
        }
        CHECK_EQ(armed, 0);
        /* A read that parks until another thread writes: SA_RESTART, and
         * entered after the signal came and its jump was made. */
        cap_thread_t w = spawn(write_byte, NULL);
        char c = 0;
        ssize_t r = read(p[0], &c, 1);
        if (r < 0)
            fprintf(stderr, "round %d: read: %s\n", round, strerror(errno));
        CHECK_EQ(r, 1);
        CHECK_EQ(c, 'w');
        join(w);
    }
    return 0;
}

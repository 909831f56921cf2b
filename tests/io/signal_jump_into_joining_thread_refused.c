/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that longjmps into a user thread waiting
 * where no call returns to make the jump (a join, not a blocking call:
 * io/signal_jump_into_parked_thread) is refused with a message (README,
 * Limits), not left to corrupt the runtime: the handler runs in a
 * worker's scheduler, and jumping from there into the thread's frames
 * would abandon the scheduler's context and the join's records. The
 * program runs itself as a child that parks main in a join of a thread
 * reading a pipe nobody writes, and jumps into main from a SIGALRM
 * handler; the child must die of SIGABRT with the message on stderr. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "io/io_util.h"

static sigjmp_buf env;

static void jump_back(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static void *read_forever(void *arg)
{
    int *p = arg;
    char c;
    ssize_t r = read(p[0], &c, 1);
    (void)r;
    return NULL;
}

static int child(void)
{
    if (sigsetjmp(env, 1) != 0) {
        puts("jumped back into the parked thread");
        return 4;
    }
    struct sigaction sa = { .sa_handler = jump_back };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    static int p[2];
    CHECK_EQ(pipe(p), 0);
    struct itimerval it = { { 0, 0 }, { 0, 20000 } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    join(spawn(read_forever, p)); /* parks until the signal */
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    child_aborts_with(argv[0], "jumped (longjmp) into the frames of another user thread");
    puts("ok");
    return 0;
}

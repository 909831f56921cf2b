/* SPDX-License-Identifier: MIT */
/* Description: two more async-signal-safe calls whose runtime code waits
 * on the offload pool (its lock, a wait record linked on the thread's
 * stack): aio_suspend, and open under _FORTIFY_SOURCE (__open_2, which
 * glibc's headers call when the flags are not a constant) of a FIFO. A
 * handler's siglongjmp out of them must be made as the call returns
 * (io/sigsafe.h), as for waitpid (io/signal_jump_out_of_runtime_calls).
 * The old code counted neither call inside: the jump was made from the
 * middle of the pool's code, and a later call hung or crashed.
 *
 * A timer aimed at the kernel thread this thread runs on jumps back to a
 * sigsetjmp before a loop of such waits that never end by themselves (an
 * aio_read of a pipe nothing writes; a FIFO nobody opens for writing).
 * After LANDINGS jumps the pool still works: the aio_read ends once the
 * pipe has a byte, and aio_suspend says so. */
#include <aio.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "io/io_util.h"

enum { LANDINGS = 1000 };

int __open_2(const char *path, int flags);

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static struct aiocb cb;
static char byte;
static char fifo[32];

static void jump_back(int sig)
{
    (void)sig;
    if (!armed)
        return;
    siglongjmp(env, 1);
}

static void calls(unsigned pass)
{
    const struct aiocb *list[1] = { &cb };
    (void)aio_suspend(list, 1, NULL); /* the timer's signal ends it (EINTR) */
    if (pass % 4 == 3) {
        int fd = __open_2(fifo, O_RDONLY); /* waits for a writer: none comes */
        if (fd >= 0)
            close(fd);
    }
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    cb.aio_fildes = p[0];
    cb.aio_buf = &byte;
    cb.aio_nbytes = 1;
    CHECK_EQ(aio_read(&cb), 0);
    temp_fifo(fifo);

    install_handler(SIGALRM, jump_back, 0);
    struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
    sev._sigev_un._tid = gettid();
    timer_t timer;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec every = { { 0, 200000 }, { 0, 200000 } };
    CHECK_EQ(timer_settime(timer, 0, &every, NULL), 0);

    static volatile int landed; /* kept across the jumps */
    static volatile unsigned pass;
    if (sigsetjmp(env, 1) != 0)
        landed++;
    armed = 1;
    while (landed < LANDINGS)
        calls(pass++);
    armed = 0;
    struct itimerspec off = { { 0, 0 }, { 0, 0 } };
    CHECK_EQ(timer_settime(timer, 0, &off, NULL), 0);
    CHECK_EQ(timer_delete(timer), 0);

    /* Still works: the read ends once there is a byte, and the wait sees it. */
    CHECK_EQ(aio_error(&cb), EINPROGRESS);
    char c = 'a';
    CHECK_EQ(write(p[1], &c, 1), 1);
    const struct aiocb *list[1] = { &cb };
    int rc;
    while ((rc = aio_suspend(list, 1, NULL)) != 0)
        CHECK_EQ(errno, EINTR);
    CHECK_EQ(aio_error(&cb), 0);
    CHECK_EQ(aio_return(&cb), 1);
    CHECK_EQ(byte, 'a');
    CHECK_EQ(unlink(fifo), 0);
    return 0;
}

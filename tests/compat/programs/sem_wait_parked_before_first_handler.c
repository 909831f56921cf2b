/* SPDX-License-Identifier: MIT */
/* Description: a sem_wait that parked before the program installed any
 * signal handler is still interrupted by the first handler's signal, as
 * with glibc (the kernel's futex wait): the main thread waits on a
 * semaphore nobody posts; another thread then installs a SIGUSR1 handler
 * without SA_RESTART and sends SIGUSR1 to the process (Linux and the
 * runtime both prefer the main thread) every millisecond until the wait
 * returns, which must be -1 with EINTR. If it has not returned after
 * 5000 signals the thread posts, so a wait that the signals never reach
 * ends with 0 and fails the test instead of hanging it. Built with
 * <capriccio/pthread.h> before the first handler's sweep, such a wait
 * never entered the signal registry and no signal reached it. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static sem_t sem;
static atomic_int returned;
static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
    (void)sig;
    caught++;
}

static void *installer(void *arg)
{
    (void)arg;
    struct timespec ms50 = { 0, 50 * 1000 * 1000 }, ms1 = { 0, 1000 * 1000 };
    nanosleep(&ms50, NULL); /* the main thread parks meanwhile */
    install_handler(SIGUSR1, on_usr1, 0);
    for (int i = 0; i < 5000 && !atomic_load(&returned); i++) {
        EXPECT_EQ(kill(getpid(), SIGUSR1), 0);
        nanosleep(&ms1, NULL); /* may itself end early with EINTR */
    }
    if (!atomic_load(&returned))
        EXPECT_EQ(sem_post(&sem), 0);
    return NULL;
}

int main(void)
{
    EXPECT_EQ(sem_init(&sem, 0, 0), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, installer, NULL), 0);
    errno = 0;
    int r = sem_wait(&sem);
    int e = errno;
    atomic_store(&returned, 1);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(r, -1);
    EXPECT_EQ(e, EINTR);
    EXPECT(caught > 0);
    int v = -1;
    EXPECT_EQ(sem_getvalue(&sem, &v), 0);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(sem_destroy(&sem), 0);
    return 0;
}

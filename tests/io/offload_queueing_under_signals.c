/* SPDX-License-Identifier: MIT */
/* Description: user threads open a FIFO that has no writer (an offloaded,
 * interruptible call, which queues a job on the offload pool while it
 * holds the job's spin lock) while two other user threads keep sending
 * them a caught signal (no SA_RESTART: the open fails with EINTR and they
 * open again). Every thread gets through its rounds. When the pool's
 * mutex was taken through the library's wrapper of glibc's
 * pthread_mutex_lock, a queueing thread could park on it holding the
 * spin lock, and the signal's interrupt callback then spun on that lock
 * on the parked thread's own worker for good (a hang within seconds at
 * one and two workers). */
#include <capriccio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

enum { OPENERS = 24, ROUNDS = 300 };

static char path[64];
static atomic_int stop, done_openers;
static cap_thread_t th[OPENERS];

static void on_usr1(int sig)
{
    (void)sig;
}

static void *opener(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int fd = open(path, O_RDONLY);
        CHECK_LT(fd, 0); /* never a writer: only a signal ends it */
    }
    atomic_fetch_add(&done_openers, 1);
    return NULL;
}

static void *killer(void *arg)
{
    unsigned r = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop)) {
        r = r * 1103515245 + 12345;
        int rc = cap_thread_kill(th[(r >> 8) % OPENERS], SIGUSR1);
        CHECK(rc == 0 || rc == ESRCH);
        if ((r >> 4) % 4 == 0)
            cap_yield();
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/cap-offload-sig-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK_EQ(mkfifo(path, 0600), 0);
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    for (int i = 0; i < OPENERS; i++)
        CHECK_EQ(cap_thread_create(&th[i], NULL, opener, NULL), 0);
    cap_thread_t k[2];
    for (int i = 0; i < 2; i++)
        CHECK_EQ(cap_thread_create(&k[i], NULL, killer, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 0; i < OPENERS; i++)
        CHECK_EQ(cap_thread_join(th[i], NULL), 0);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(cap_thread_join(k[i], NULL), 0);
    CHECK_EQ(atomic_load(&done_openers), OPENERS);
    unlink(path);
    rmdir(dir);
    return 0;
}

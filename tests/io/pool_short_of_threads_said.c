/* SPDX-License-Identifier: MIT */
/* Description: a blocking call that queues because every offload-pool
 * thread is busy (CAP_POOL_THREADS=1, tests.cmake: one thread blocked in
 * semop holds it) is said on stderr, once, naming CAP_POOL_THREADS: a
 * program whose queued call is the one a running call waits for hangs,
 * and before it hung without a word (no deadlock report: the pool is
 * busy). The calls queued after it say nothing more. */
#include <sys/ipc.h>
#include <sys/sem.h>

#include "io/io_util.h"

enum { QUEUED = 3 };

static int sem; /* 0: the blocker's; 1..QUEUED: the queued calls' */

static void *wait_on(void *arg)
{
    struct sembuf take = { (unsigned short)(uintptr_t)arg, -1, 0 };
    CHECK_EQ(semop(sem, &take, 1), 0);
    return NULL;
}

static int count(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word))
        n++;
    return n;
}

int main(void)
{
    alarm(40);
    sem = semget(IPC_PRIVATE, 1 + QUEUED, 0600);
    CHECK_GE(sem, 0);
    char path[] = "/tmp/capriccio-pool-said-XXXXXX";
    int log = mkstemp(path);
    CHECK_GE(log, 0);
    CHECK_EQ(unlink(path), 0);
    int saved = dup(2);
    CHECK_GE(saved, 0);
    CHECK_EQ(dup2(log, 2), 2);

    cap_thread_t blocker = spawn(wait_on, (void *)(uintptr_t)0);
    while (semctl(sem, 0, GETNCNT) < 1) /* in the kernel: it holds the thread */
        cap_usleep(1000);
    cap_thread_t queued[QUEUED];
    for (int i = 0; i < QUEUED; i++)
        queued[i] = spawn(wait_on, (void *)(uintptr_t)(1 + i));
    /* The pool's thread stays held until the first queued call is said
     * (before, never: the alarm fails the program). */
    static char text[4096];
    for (;;) {
        ssize_t n = pread(log, text, sizeof text - 1, 0);
        CHECK_GE(n, 0);
        text[n] = '\0';
        if (strstr(text, "offload pool") != NULL)
            break;
        cap_usleep(1000);
    }
    /* Their semaphores first, then the blocker's: the pool's thread takes
     * the queued calls in turn, and each completes at once. */
    for (int i = 0; i < QUEUED; i++)
        CHECK_EQ(semctl(sem, 1 + i, SETVAL, 1), 0);
    CHECK_EQ(semctl(sem, 0, SETVAL, 1), 0);
    join(blocker);
    for (int i = 0; i < QUEUED; i++)
        join(queued[i]);

    CHECK_EQ(dup2(saved, 2), 2);
    ssize_t n = pread(log, text, sizeof text - 1, 0);
    CHECK_GE(n, 0);
    text[n] = '\0';
    fprintf(stderr, "said: %s", text);
    CHECK_EQ(count(text, "CAP_POOL_THREADS"), 1);
    CHECK_EQ(count(text, "offload pool"), 1);
    CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
    return 0;
}

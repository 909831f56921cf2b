/* SPDX-License-Identifier: MIT */
/* Description: a process that dies while it waits on a process-shared
 * semaphore leaves itself counted among the waiters (nothing takes it
 * out); the semaphore still works for the living, and cap_sem_destroy
 * succeeds, as glibc's sem_destroy does, where a private semaphore with
 * a waiter counted says EBUSY. Before, the destroy said EBUSY for good. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

int main(void)
{
    cap_sem_t *sem = mmap(NULL, sizeof *sem, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sem != MAP_FAILED);
    CHECK_EQ(cap_sem_init(sem, 1, 0), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cap_sem_wait(sem); /* killed while it waits */
        _exit(3);
    }
    while (sem_waiters_counted(sem) == 0)
        cap_yield(); /* the child counts itself */
    CHECK_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status));

    CHECK_EQ(cap_sem_post(sem), 0);
    CHECK_EQ(cap_sem_wait(sem), 0);
    CHECK_EQ(cap_sem_destroy(sem), 0);
    CHECK_EQ(munmap(sem, sizeof *sem), 0);

    cap_sem_t priv;
    CHECK_EQ(cap_sem_init(&priv, 0, 0), 0);
    priv.state |= UINT64_C(1) << 32; /* a waiter counted */
    CHECK_EQ(cap_sem_destroy(&priv), EBUSY);
    return 0;
}

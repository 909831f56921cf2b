/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in flock, waitpid, wait, waitid or system()
 * lets the other threads run: the lock's holder releases it, and a feeder
 * thread writes the line a child process waits for. Each wait depends on
 * another thread, so a wait that held up the threads beside it would
 * never end (the alarm fails the program). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char path[] = "/tmp/compat_process_waits_XXXXXX";
static volatile int released;

static void *locker(void *arg)
{
    (void)arg;
    int fd = open(path, O_RDWR);
    EXPECT(fd >= 0);
    EXPECT_EQ(flock(fd, LOCK_EX), 0); /* waits for main's lock */
    EXPECT_EQ(released, 1);
    EXPECT_EQ(flock(fd, LOCK_UN), 0);
    close(fd);
    return NULL;
}

static void flock_between_threads(void)
{
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    EXPECT_EQ(flock(fd, LOCK_EX), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, locker, NULL), 0);
    usleep(50000);
    released = 1;
    EXPECT_EQ(flock(fd, LOCK_UN), 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    close(fd);
    unlink(path);
}

/* Writes a line into the pipe after a pause, so that the waiter is
 * already waiting. */
static void *feeder(void *arg)
{
    int fd = *(int *)arg;
    usleep(50000);
    EXPECT_EQ(write(fd, "x\n", 2), 2);
    return NULL;
}

/* A child running `sh -c script` with the pipe's read end as its stdin. */
static pid_t spawn_reader(int in, const char *script)
{
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        dup2(in, 0);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    return pid;
}

enum { BY_WAITPID, BY_WAIT, BY_WAITID };

static void wait_for_fed_child(int how)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = spawn_reader(p[0], "read x && exit 3; exit 9");
    close(p[0]);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, feeder, &p[1]), 0);
    int status = -1;
    if (how == BY_WAITPID) {
        EXPECT_EQ(waitpid(pid, &status, 0), pid);
    } else if (how == BY_WAIT) {
        EXPECT_EQ(wait(&status), pid);
    } else {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        EXPECT_EQ(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
        EXPECT_EQ(si.si_pid, pid);
        EXPECT_EQ(si.si_code, CLD_EXITED);
        status = si.si_status << 8;
    }
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    close(p[1]);
}

static void system_fed_by_thread(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, feeder, &p[1]), 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "read x <&%d && exit 4; exit 9", p[0]);
    int status = system(cmd);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 4);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    alarm(20);
    flock_between_threads();
    wait_for_fed_child(BY_WAITPID);
    wait_for_fed_child(BY_WAIT);
    wait_for_fed_child(BY_WAITID);
    system_fed_by_thread();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: children made by popen and vfork read a pipe the parent
 * made and writes to only once they wait: the child sees an ordinary
 * blocking pipe (the library's pipes are non-blocking underneath; a child
 * that got one failed its read with EAGAIN). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void by_popen(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "read x <&%d && echo got $x", p[0]);
    FILE *f = popen(cmd, "r");
    EXPECT(f != NULL);
    usleep(50000); /* the shell waits in its read */
    EXPECT_EQ(write(p[1], "hello\n", 6), 6);
    char buf[64] = "";
    EXPECT(fgets(buf, sizeof buf, f) != NULL);
    EXPECT_EQ(strcmp(buf, "got hello\n"), 0);
    int status = pclose(f);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    close(p[0]);
    close(p[1]);
}

static void by_vfork(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "read x <&%d && exit 3; exit 9", p[0]);
    pid_t pid = vfork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    EXPECT(pid > 0);
    usleep(50000);
    EXPECT_EQ(write(p[1], "x\n", 2), 2);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    alarm(20);
    by_popen();
    by_vfork();
    return 0;
}

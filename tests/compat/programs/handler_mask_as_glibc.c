/* SPDX-License-Identifier: MIT */
/* Description: a handler's signal mask, as glibc and Linux give it:
 *  - sigaction reports the sa_mask the program installed, bit for bit
 *    (the library adds a mark of its own to the kernel's copy);
 *  - a program exec'd from a handler starts with the handler's mask: its
 *    own signal and its sa_mask, nothing more (SigBlk in the new
 *    program's /proc/self/status), whatever the library blocks in
 *    handlers for itself. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static uint64_t first_word(const sigset_t *set)
{
    uint64_t word;
    memcpy(&word, set, sizeof word);
    return word;
}

static void on_usr1(int sig)
{
    (void)sig;
    /* stdout is the pipe: the new program prints its mask there. */
    execl("/bin/grep", "grep", "-h", "SigBlk", "/proc/self/status", (char *)NULL);
    _exit(126);
}

static void reports_installed_mask(void)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGUSR2);
    sigaddset(&act.sa_mask, SIGRTMIN + 1);
    EXPECT_EQ(sigaction(SIGUSR1, &act, NULL), 0);
    memset(&old, 0, sizeof old);
    EXPECT_EQ(sigaction(SIGUSR1, NULL, &old), 0);
    EXPECT_EQ(first_word(&old.sa_mask), first_word(&act.sa_mask));
    /* Installing again reports the same through old. */
    EXPECT_EQ(sigaction(SIGUSR1, &act, &old), 0);
    EXPECT_EQ(first_word(&old.sa_mask), first_word(&act.sa_mask));
}

static void exec_from_handler_keeps_handler_mask(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        struct sigaction act;
        memset(&act, 0, sizeof act);
        act.sa_handler = on_usr1;
        sigemptyset(&act.sa_mask);
        sigaddset(&act.sa_mask, SIGUSR2);
        if (sigaction(SIGUSR1, &act, NULL) != 0)
            _exit(125);
        raise(SIGUSR1);
        _exit(124); /* the handler execs */
    }
    close(p[1]);
    char out[128];
    read_to_end(p[0], out, sizeof out);
    close(p[0]);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    /* SIGUSR1 (10) and SIGUSR2 (12): bits 9 and 11. */
    char want[64];
    snprintf(want, sizeof want, "SigBlk:\t%016llx\n",
             (unsigned long long)((1ULL << (SIGUSR1 - 1)) | (1ULL << (SIGUSR2 - 1))));
    if (strcmp(out, want) != 0)
        fprintf(stderr, "got \"%s\", want \"%s\"\n", out, want);
    EXPECT_EQ(strcmp(out, want), 0);
}

int main(void)
{
    reports_installed_mask();
    exec_from_handler_keeps_handler_mask();
    return 0;
}

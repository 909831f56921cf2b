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

/* Runs with the pipe as standard output: the handler execs. */
static void raise_with_usr2_blocked(void)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGUSR2);
    if (sigaction(SIGUSR1, &act, NULL) != 0)
        _exit(122);
    raise(SIGUSR1);
}

static void exec_from_handler_keeps_handler_mask(void)
{
    char out[128];
    child_output(raise_with_usr2_blocked, out, sizeof out);
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

/* SPDX-License-Identifier: MIT */
/* Description: getpass() waits for the line on the offload pool: in a
 * child whose controlling terminal is a pseudo-terminal, another thread
 * runs while getpass waits (on CAP_WORKERS=1 too: it writes "tick" to the
 * terminal, and only then does the parent type the password); getpass
 * returns the line typed. Before, glibc's internal stdio read held the
 * worker until the line came. The child is this program exec'd again
 * right after login_tty: a fork's child that made threads at once
 * sometimes hung in the sanitized build (GCC 12's AddressSanitizer, a
 * lock of its own: see sched/forked_child_starts_workers). */
#include <pty.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <utmp.h>

#include "compat/programs/terminal_util.h"
#include "io/io_util.h"

/* The child, on the terminal: its exit status says which check failed
 * (7: none). */
static int child(void)
{
    cap_thread_t t = spawn(terminal_ticker, NULL);
    char *pw = getpass("pw: ");
    if (pw == NULL || strcmp(pw, "secret") != 0)
        return 21;
    if (!atomic_load(&terminal_ticked))
        return 22; /* the line came first: the thread did not run */
    join(t);
    return 7;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int master, terminal;
    CHECK_EQ(openpty(&master, &terminal, NULL, NULL, NULL), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(master);
        if (login_tty(terminal) != 0)
            _exit(20);
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(19);
    }
    close(terminal);
    /* Waits for the child's thread and getpass's prompt (5 s at most),
     * then types the line. Not before the prompt: getpass flushes the
     * terminal's input first (TCSAFLUSH), and a line typed earlier was
     * lost, the child waiting for good (seen once in CI, sanitized). */
    const char *const wants[] = { "tick", "pw: ", NULL };
    bool saw_tick = master_shows_all_within(master, wants, 5000);
    CHECK_EQ(write(master, "secret\n", 7), 7);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 7);
    CHECK(saw_tick);
    close(master);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Pseudo-terminal helpers of the tests whose child runs on a terminal
 * (compat/programs/forkpty_child.c, io/getpass_waits_offloaded.c). Plain
 * POSIX, like every compatibility program. */
#ifndef COMPAT_TERMINAL_UTIL_H
#define COMPAT_TERMINAL_UTIL_H

#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The child's other thread: after 20 ms it sets terminal_ticked and
 * writes "tick" to its standard output, the terminal. A child whose
 * waiting call held its only worker never lets it run before the parent
 * answers. */
static atomic_int terminal_ticked;

static void *terminal_ticker(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 20 * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
    atomic_store(&terminal_ticked, 1);
    if (write(1, "tick\n", 5) != 5)
        _exit(30);
    return NULL;
}

/* Whether every string of wants (NULL-ended) shows on the master (the
 * terminal adds \r), in any order, with no more than ms milliseconds
 * between two pieces of output, before its end (EIO once the child's
 * side is closed). */
static inline int master_shows_all_within(int master, const char *const *wants, int ms)
{
    struct pollfd pfd = { .fd = master, .events = POLLIN };
    char got[256];
    size_t len = 0;
    while (len < sizeof got - 1 && poll(&pfd, 1, ms) == 1) {
        ssize_t n = read(master, got + len, sizeof got - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        got[len] = '\0';
        int all = 1;
        for (int i = 0; wants[i] != NULL; i++)
            all &= strstr(got, wants[i]) != NULL;
        if (all)
            return 1;
    }
    return 0;
}

/* master_shows_all_within for one string. */
static inline int master_shows_within(int master, const char *want, int ms)
{
    const char *const wants[] = { want, NULL };
    return master_shows_all_within(master, wants, ms);
}

#endif

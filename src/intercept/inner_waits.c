/* SPDX-License-Identifier: MIT */
/*
 * libc functions that wait through glibc's internal calls, which no
 * wrapper sees: the calling worker waited as long as they did, and every
 * user thread on it with it. Each runs whole on the offload pool while
 * only its caller waits (a wait on another party: io/offload.c's
 * cap__offload_wait).
 *
 * wordexp with command substitution ($(...) or `...`): glibc runs the
 * command with its internal pipe, fork, read and waitpid. A call that
 * cannot run a command (WRDE_NOCMD, or neither form in the words)
 * expands in place: only the shell's command substitution makes glibc
 * fork.
 *
 * getpass: glibc reads the line from the terminal with its internal
 * stdio, as long as the user takes to type it.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <wordexp.h>

#include "intercept/intercept.h"
#include "io/io.h"

struct wordexp_call {
    const char *words;
    wordexp_t *we;
    int flags;
    int ret;
    int err;
};

static void run_wordexp(void *arg)
{
    struct wordexp_call *c = arg;
    errno = c->err;
    c->ret = CAP__REAL(wordexp)(c->words, c->we, c->flags);
    c->err = errno;
}

static bool may_run_commands(const char *words, int flags)
{
    return !(flags & WRDE_NOCMD) && (strchr(words, '`') != NULL || strstr(words, "$(") != NULL);
}

int wordexp(const char *words, wordexp_t *we, int flags)
{
    if (words == NULL || !may_run_commands(words, flags))
        return CAP__REAL(wordexp)(words, we, flags);
    struct wordexp_call c = { .words = words, .we = we, .flags = flags, .err = errno };
    if (cap__offload_wait(run_wordexp, &c) != 0) /* no pool thread: as before */
        return CAP__REAL(wordexp)(words, we, flags);
    errno = c.err;
    return c.ret;
}

struct getpass_call {
    const char *prompt;
    char *ret;
    int err;
};

static void run_getpass(void *arg)
{
    struct getpass_call *c = arg;
    errno = c->err;
    c->ret = CAP__REAL(getpass)(c->prompt);
    c->err = errno;
}

char *getpass(const char *prompt)
{
    struct getpass_call c = { .prompt = prompt, .err = errno };
    if (cap__offload_wait(run_getpass, &c) != 0) /* no pool thread: as before */
        return CAP__REAL(getpass)(prompt);
    errno = c.err;
    return c.ret;
}

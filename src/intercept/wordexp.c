/* SPDX-License-Identifier: MIT */
/*
 * wordexp with command substitution ($(...) or `...`): glibc runs the
 * command with its internal pipe, fork, read and waitpid, which no
 * wrapper sees, so the calling worker waited as long as the command ran,
 * and every user thread on it with it. Such a call runs whole on the
 * offload pool while only its caller waits (a wait on another party, a
 * child: io/offload.c's cap__offload_wait). A call that cannot run a
 * command (WRDE_NOCMD, or neither form in the words) expands in place:
 * only the shell's command substitution makes glibc fork.
 */
#include <errno.h>
#include <string.h>
#include <wordexp.h>

#include "intercept/intercept.h"
#include "io/io.h"

struct call {
    const char *words;
    wordexp_t *we;
    int flags;
    int ret;
    int err;
};

static void run(void *arg)
{
    struct call *c = arg;
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
    struct call c = { .words = words, .we = we, .flags = flags, .err = errno };
    if (cap__offload_wait(run, &c) != 0) /* no pool thread: as before */
        return CAP__REAL(wordexp)(words, we, flags);
    errno = c.err;
    return c.ret;
}

/* SPDX-License-Identifier: MIT */
/* Description: a signal sent to a thread parked on a mutex runs its
 * handler as the thread gets the mutex, inside the runtime's wait; a
 * siglongjmp out of that handler would abandon the wait's records, so it
 * is refused with a message (docs/pthread-compat.md, Signals) rather than
 * corrupting the runtime. The child must die of SIGABRT with the message
 * on stderr. (A jump out of a call that signals interrupt, a read, works:
 * io/thread_kill_handler_jumps_out.) */
#include <capriccio/sync.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "io/io_util.h"

extern char **environ;

static sigjmp_buf env;
static cap_mutex_t mu = CAP_MUTEX_INITIALIZER;
static atomic_int ready;

static void jump_back(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static void *locker(void *arg)
{
    (void)arg;
    if (sigsetjmp(env, 1) != 0) {
        puts("jumped out of the mutex wait");
        exit(4);
    }
    atomic_store(&ready, 1);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    exit(5); /* the handler ran nowhere, or returned */
}

static int child(void)
{
    install_handler(SIGUSR1, jump_back, 0);
    CHECK_EQ(cap_mutex_lock(&mu), 0);
    cap_thread_t t = spawn(locker, NULL);
    while (!atomic_load(&ready))
        cap_usleep(1000);
    cap_usleep(20000); /* parked on the mutex, most likely (either way dies) */
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    CHECK_EQ(cap_mutex_unlock(&mu), 0);
    join(t);
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int errp[2];
    CHECK_EQ(pipe(errp), 0);
    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, errp[1], 2), 0);
    char *args[] = { argv[0], "child", NULL };
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    CHECK_EQ(close(errp[1]), 0);
    char err[4096];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof err - 1 && (r = read(errp[0], err + got, sizeof err - 1 - got)) > 0)
        got += (size_t)r;
    err[got] = '\0';
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fprintf(stderr, "child status %#x, stderr: %s\n", status, err);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(err, "jumped (longjmp) out of a wait that signals do not interrupt") != NULL);
    puts("ok");
    return 0;
}

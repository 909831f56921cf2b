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
#include <string.h>

#include "io/io_util.h"

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
    child_aborts_with(argv[0], "jumped (longjmp) out of a wait that signals do not interrupt");
    puts("ok");
    return 0;
}

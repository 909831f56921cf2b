/* SPDX-License-Identifier: MIT */
/* Description: fork() while a prepare handler of glibc's own list (a
 * library's pthread_atfork, not the header's cap_atfork) waits for its
 * library's mutex, whose holder calls sigaction before it unlocks: the
 * holder goes on, the handler gets the mutex, and fork completes, as
 * under NPTL. fork took the runtime's own locks (the sigaction table's
 * among them) before glibc's fork ran that list, so the holder spun in
 * sigaction for good while the handler waited for it. The holder is a
 * kernel thread the library does not run (pthread_create without the
 * header) in one round and a user thread in the other; it calls
 * sigaction once the handler has begun, so the library before hangs
 * every time (the test's timeout). The child checks that sigaction works
 * there too; the parent and child handlers unlock. */
#include <capriccio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static pthread_mutex_t lib_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int in_prepare, prepared;

static void lib_prepare(void)
{
    atomic_store(&in_prepare, 1);
    pthread_mutex_lock(&lib_mutex); /* waits for the holder */
    atomic_store(&prepared, 1);
}

static void lib_unlock(void)
{
    pthread_mutex_unlock(&lib_mutex);
}

static void on_usr1(int sig)
{
    (void)sig;
}

static void install(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

/* Holds the library's mutex until the fork's prepare handler waits for
 * it, and calls sigaction meanwhile. */
static void *holder(void *arg)
{
    bool user = arg != NULL;
    CHECK_EQ(pthread_mutex_lock(&lib_mutex), 0);
    while (!atomic_load(&in_prepare)) {
        if (user)
            cap_sleep_ns(1000 * 1000);
        else
            usleep(1000);
    }
    install();
    CHECK_EQ(atomic_load(&prepared), 0); /* it still waits for us */
    CHECK_EQ(pthread_mutex_unlock(&lib_mutex), 0);
    return NULL;
}

/* Until the holder has the mutex. */
static void wait_until_held(bool user)
{
    while (pthread_mutex_trylock(&lib_mutex) == 0) {
        CHECK_EQ(pthread_mutex_unlock(&lib_mutex), 0);
        if (user)
            cap_yield();
        else
            usleep(1000);
    }
}

static void fork_once(void)
{
    pid_t pid = fork();
    CHECK_NE(pid, -1);
    if (pid == 0) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        _exit(sigaction(SIGUSR1, &sa, NULL) == 0 ? 0 : 3);
    }
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st));
    CHECK_EQ(WEXITSTATUS(st), 0);
    CHECK_EQ(atomic_load(&prepared), 1);
}

int main(void)
{
    CHECK_EQ(pthread_atfork(lib_prepare, lib_unlock, lib_unlock), 0);

    /* A kernel thread holds the mutex. */
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, holder, NULL), 0);
    wait_until_held(false);
    fork_once();
    CHECK_EQ(pthread_join(kt, NULL), 0);

    /* A user thread holds it. */
    atomic_store(&in_prepare, 0);
    atomic_store(&prepared, 0);
    cap_thread_t ut;
    CHECK_EQ(cap_thread_create(&ut, NULL, holder, (void *)1), 0);
    wait_until_held(true);
    fork_once();
    CHECK_EQ(cap_thread_join(ut, NULL), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: getaddrinfo_a(GAI_WAIT) waits on after a signal handler
 * (one without SA_RESTART) runs in the waiting thread, and returns 0 once
 * its lookup has ended, as glibc's does (its wait loops until every
 * request has ended; it never gives EAI_INTR). Before, the first handler
 * ended it with EAI_INTR and the lookup still in progress. The lookup, of
 * a dotless name, is held up while glibc's resolver opens HOSTALIASES, a
 * FIFO here, until the test opens the other end, after the handler has
 * run a few times. */
#include <netdb.h>

#include "io/io_util.h"

static atomic_int hits, done;
static int result = -1;
static struct gaicb cb = { .ar_name = "capriccionodotsname" };

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&hits, 1);
}

static void *waiter(void *arg)
{
    (void)arg;
    struct gaicb *list[1] = { &cb };
    result = getaddrinfo_a(GAI_WAIT, list, 1, NULL);
    atomic_store(&done, 1);
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    char fifo[32];
    temp_fifo(fifo);
    CHECK_EQ(setenv("HOSTALIASES", fifo, 1), 0);
    cap_thread_t t = spawn(waiter, NULL);
    /* Handlers while the lookup is held up (its resolver waits for a
     * writer on the FIFO). */
    while (atomic_load(&hits) < 5 && !atomic_load(&done)) {
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        cap_sleep_ns(2000000);
    }
    CHECK_EQ(gai_error(&cb), EAI_INPROGRESS);
    /* Let the resolver read the (empty) alias file; the lookup then ends. */
    while (!atomic_load(&done)) {
        int w = open(fifo, O_WRONLY | O_NONBLOCK);
        if (w >= 0)
            CHECK_EQ(close(w), 0);
        cap_sleep_ns(1000000);
    }
    join(t);
    CHECK_EQ(result, 0);
    CHECK(gai_error(&cb) != EAI_INPROGRESS);
    if (cb.ar_result != NULL)
        freeaddrinfo(cb.ar_result);
    CHECK_EQ(unlink(fifo), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Start-up: before main() runs, a constructor reads the settings, wraps
 * the initial kernel thread's current code in a TCB (so main() is a user
 * thread running on the process stack), and starts the workers. No init
 * call is needed. cap__runtime_ensure covers code that runs in another
 * library's constructor before ours.
 *
 * cap__current lives here on purpose: every program that uses the library
 * calls it, so a static link always pulls in this file and its constructor.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capriccio.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigmask.h"
#include "runtime/config.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "sync/sync.h"
#include "thread/thread.h"
#include "util/asan.h"
#include "util/clock.h"
#include "util/die.h"

#define SCHED_STACK_SIZE ((size_t)256 * 1024)

static atomic_int started;
/* CAP_AFTER_LIBC=native with the library after libc: no runtime started
 * (intercept/real.c). Written by the one thread that starts it, once
 * start_runtime returns (a caller racing it reads false meanwhile, as it
 * finds a runtime still starting). */
static bool stood_aside;

/* Starts the runtime; false if it stood aside. */
static bool start_runtime(void)
{
    cap__config_load();
    if (!cap__ic_interposed()) {
        if (!cap__cfg.after_libc_native)
            cap__ic_order_refuse("refusing to start");
        return false;
    }

    cap__thread *main_thread = cap__thread_alloc();
    if (main_thread == NULL)
        cap__die("cannot allocate the main thread's control block\n");
    main_thread->is_main = true;
    cap__main_handle = cap__thread_handle(main_thread);
    strcpy(main_thread->name, "main");
    main_thread->create_site = NULL;
    /* The process stack, for AddressSanitizer and the gdb extension; it is
     * not ours to free. */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        pthread_attr_getstack(&attr, &lo, &size);
        main_thread->stack.lo = lo;
        main_thread->stack.hi = (char *)lo + size;
        pthread_attr_destroy(&attr);
    }
    atomic_store(&cap__live_threads, 1);
    cap__asan_fork_register(); /* sanitized builds: util/asan.h */
    cap__io_start();
    cap__ic_yield_start();
    cap__deadlock_init();
    cap__futex_key_init();
    cap__workers_start(main_thread, SCHED_STACK_SIZE);
    cap__sigmask_init(main_thread);
    if (cap__park_reserve(1) != 0)
        cap__die("cannot allocate the timer heaps\n");
    return true;
}

/* Starts the runtime once; false if it stood aside. */
static bool start_once(void)
{
    int expected = 0;
    if (atomic_load_explicit(&started, memory_order_acquire) == 0 &&
        atomic_compare_exchange_strong(&started, &expected, 1))
        stood_aside = !start_runtime();
    return !stood_aside;
}

void cap__runtime_ensure(void)
{
    /* A call of the library's own interface (cap_thread_create, ...)
     * needs the runtime it stood aside from. */
    if (!start_once())
        cap__ic_order_refuse("with CAP_AFTER_LIBC=native no runtime started, and a call "
                             "of the library's own interface needs one");
}

__attribute__((constructor(101))) static void capriccio_constructor(void)
{
    start_once();
}

/* The library's last step of an exit(): priority 101 runs it after the
 * program's destructors in a static link too (in the shared library, in
 * its own turn after the program's), and before glibc writes out the
 * streams. First the streams' bytes that a reader must take (they may
 * park), then the descriptor backend lets go of the files its waits
 * hold, so they close with the process. */
__attribute__((destructor(101))) static void capriccio_destructor(void)
{
    cap__ic_stdout_exit_flush();
    cap__io_at_exit();
}

int cap_worker_id(void)
{
    cap__worker *w = cap__worker_self();
    return w != NULL && w->current != NULL ? w->id : -1;
}

int cap_worker_count(void)
{
    cap__runtime_ensure();
    return cap__rt.nworkers;
}

uint64_t cap_now_ns(void)
{
    return cap__now();
}

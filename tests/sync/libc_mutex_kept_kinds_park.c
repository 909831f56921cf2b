/* SPDX-License-Identifier: MIT */
/* Description: glibc mutexes of the kinds glibc keeps to itself (robust,
 * priority-inheritance, process-shared; each with the NORMAL, RECURSIVE
 * and ERRORCHECK types) on user threads. For each:
 *  - a holder parks holding it while another user thread asks for it: the
 *    asker parks too and other threads of its worker keep running; it gets
 *    the mutex when the holder lets go. Before, the asker slept in glibc's
 *    lock, and with one worker the holder never ran again (the test hung);
 *    with two, glibc took two user threads of one worker for one holder;
 *  - eight user threads that park inside the critical section count to
 *    the right total (mutual exclusion);
 *  - another user thread's trylock says EBUSY and its unlock EPERM; a
 *    RECURSIVE holder locks again, an ERRORCHECK one gets EDEADLK;
 *  - a condition wait with it (the mutex released and taken back);
 *  - process-shared: a child process holds it until told; the parent's
 *    user thread parks until it lets go, its worker still running others.
 * Under CAP_MIGRATE=1 a holder stays on its worker (glibc checks the
 * kernel thread id at unlock): before, its unlock said EPERM. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* Few rounds: the program's time is the wake-ups of its parks and sleeps,
 * each a kernel thread's scheduling delay on a loaded machine, not CPU.
 * With 200 the ASan build under load took 15-20 s of its 60, two workers
 * (0.9 s of CPU), most of it in exclusion(). */
enum { COUNTERS = 8, ROUNDS = 50 };

static pthread_mutex_t *m;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int holding, release_it, asker_in, ready;
static atomic_long ticks;
static atomic_int ticking;
static long counter;
static int kind_type;

static void *ticker(void *arg)
{
    (void)arg;
    while (atomic_load(&ticking)) {
        atomic_fetch_add(&ticks, 1);
        cap_sleep_ns(100000);
    }
    return NULL;
}

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(m), 0);
    atomic_store(&holding, 1);
    while (!atomic_load(&release_it))
        cap_sleep_ns(1000000); /* parks holding it */
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    return NULL;
}

static void *asker(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_trylock(m), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(m), EPERM);
    atomic_store(&asker_in, 1);
    CHECK_EQ(pthread_mutex_lock(m), 0);
    CHECK_EQ(atomic_load(&release_it), 1); /* only after the holder let go */
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    return NULL;
}

static void *count(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(pthread_mutex_lock(m), 0);
        long v = counter;
        cap_yield(); /* the others run meanwhile */
        if (i % 16 == 0)
            cap_sleep_ns(10000);
        counter = v + 1;
        CHECK_EQ(pthread_mutex_unlock(m), 0);
    }
    return NULL;
}

static void *cond_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(m), 0);
    atomic_store(&ready, 1);
    while (atomic_load(&ready) != 2)
        CHECK_EQ(pthread_cond_wait(&cv, m), 0);
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    return NULL;
}

static void parked_holder_and_asker(void)
{
    atomic_store(&holding, 0);
    atomic_store(&release_it, 0);
    atomic_store(&asker_in, 0);
    cap_thread_t h = spawn(holder, NULL);
    while (!atomic_load(&holding))
        cap_yield();
    cap_thread_t a = spawn(asker, NULL);
    while (!atomic_load(&asker_in))
        cap_yield();
    long before = atomic_load(&ticks);
    while (atomic_load(&ticks) < before + 5)
        cap_sleep_ns(100000); /* the worker runs on while the asker waits */
    atomic_store(&release_it, 1);
    join(h);
    join(a);
}

static void exclusion(void)
{
    counter = 0;
    cap_thread_t t[COUNTERS];
    for (int i = 0; i < COUNTERS; i++)
        t[i] = spawn(count, NULL);
    for (int i = 0; i < COUNTERS; i++)
        join(t[i]);
    CHECK_EQ(counter, (long)COUNTERS * ROUNDS);
}

static void own_requests(void)
{
    CHECK_EQ(pthread_mutex_lock(m), 0);
    if (kind_type == PTHREAD_MUTEX_RECURSIVE) {
        CHECK_EQ(pthread_mutex_lock(m), 0);
        CHECK_EQ(pthread_mutex_trylock(m), 0);
        CHECK_EQ(pthread_mutex_unlock(m), 0);
        CHECK_EQ(pthread_mutex_unlock(m), 0);
    } else if (kind_type == PTHREAD_MUTEX_ERRORCHECK) {
        CHECK_EQ(pthread_mutex_lock(m), EDEADLK);
    }
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    if (kind_type != PTHREAD_MUTEX_NORMAL)
        CHECK_EQ(pthread_mutex_unlock(m), EPERM); /* not held */
}

static void cond_wait_with_it(void)
{
    atomic_store(&ready, 0);
    cap_thread_t w = spawn(cond_waiter, NULL);
    while (atomic_load(&ready) != 1)
        cap_yield();
    CHECK_EQ(pthread_mutex_lock(m), 0); /* the waiter let it go */
    atomic_store(&ready, 2);
    CHECK_EQ(pthread_cond_signal(&cv), 0);
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    join(w);
}

/* Lets the child of held_by_another_process go once the ticker has run
 * while the parent waits for m (or is about to). */
static int release_fd;
static long release_after;

static void *releaser(void *arg)
{
    (void)arg;
    while (atomic_load(&ticks) < release_after + 5)
        cap_sleep_ns(100000);
    char c = 1;
    CHECK_EQ(write(release_fd, &c, 1), 1);
    return NULL;
}

/* A child process holds the process-shared m until the parent's releaser
 * tells it to let go, which it does only after the ticker ran: the
 * parent's lock, made meanwhile, parks, and its worker runs the others.
 * (Before, the child held it for 30 ms: a parent that ran later than that
 * under load found it free, and its trylock or its ticks check failed.) */
static void held_by_another_process(void)
{
    int p[2], go[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(pipe(go), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        if (pthread_mutex_lock(m) != 0)
            _exit(2);
        char c = 1;
        if (write(p[1], &c, 1) != 1)
            _exit(3);
        if (read(go[0], &c, 1) != 1)
            _exit(5);
        _exit(pthread_mutex_unlock(m) == 0 ? 0 : 4);
    }
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    long before = atomic_load(&ticks);
    CHECK_EQ(pthread_mutex_trylock(m), EBUSY);
    release_fd = go[1];
    release_after = before;
    cap_thread_t r = spawn(releaser, NULL);
    CHECK_EQ(pthread_mutex_lock(m), 0); /* parks until the child lets go */
    CHECK_GT(atomic_load(&ticks), before); /* its worker ran the ticker meanwhile */
    CHECK_EQ(pthread_mutex_unlock(m), 0);
    join(r);
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(p[0]);
    close(p[1]);
    close(go[0]);
    close(go[1]);
}

static void run_kind(const char *what, int type, int robust, int protocol, int pshared)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, type), 0);
    if (robust)
        CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    if (protocol != PTHREAD_PRIO_NONE)
        CHECK_EQ(pthread_mutexattr_setprotocol(&a, protocol), 0);
    if (pshared)
        CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_mutex_init(m, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    kind_type = type;
    for (int round = 0; round < 3; round++) {
        parked_holder_and_asker();
        exclusion();
        own_requests();
        cond_wait_with_it();
    }
    if (pshared)
        held_by_another_process();
    CHECK_EQ(pthread_mutex_destroy(m), 0);
    (void)what;
}

int main(void)
{
    m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    atomic_store(&ticking, 1);
    cap_thread_t tk = spawn(ticker, NULL);
    int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK };
    for (int i = 0; i < 3; i++) {
        run_kind("robust", types[i], 1, PTHREAD_PRIO_NONE, 0);
        run_kind("pi", types[i], 0, PTHREAD_PRIO_INHERIT, 0);
        run_kind("pshared", types[i], 0, PTHREAD_PRIO_NONE, 1);
        run_kind("robust pshared", types[i], 1, PTHREAD_PRIO_NONE, 1);
    }
    atomic_store(&ticking, 0);
    join(tk);
    munmap(m, sizeof *m);
    return 0;
}

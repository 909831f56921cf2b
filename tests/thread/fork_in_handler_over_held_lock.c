/* SPDX-License-Identifier: MIT */
/* Description: fork and _Fork made by a signal handler that interrupted
 * the runtime while it held a lock the fork holds across the real fork
 * (the default thread attributes', intercept/handover.c). The holder is
 * the interrupted code on the handler's own kernel thread, which lets go
 * only once the handler returns: a fork that waited for the lock would
 * spin for ever (with every signal blocked: ctest's timeout ends it).
 *
 * The interruption is made exact: cap_thread_attr_getdefault copies the
 * defaults into the caller's attribute under that lock, and here the
 * attribute is on a read-only page, so the copy faults inside the lock.
 * The SIGSEGV handler makes the page writable, forks, waits for its
 * child and returns; the copy then completes with the defaults. */
#include <capriccio.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fork_util.h"

enum { CHILD_STATUS = 42, ALARM_S = 30 };

static char *page;
static size_t page_size;
static atomic_int use_underscore; /* 1: _Fork, 0: fork */
static atomic_int faults;
static int child_status = -1;

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    (void)uctx;
    char *addr = si->si_addr;
    if (addr < page || addr >= page + page_size) {
        signal(SIGSEGV, SIG_DFL); /* not ours: fault again and die */
        return;
    }
    atomic_fetch_add(&faults, 1);
    if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0)
        _exit(3);
    pid_t pid = atomic_load(&use_underscore) ? _Fork() : fork();
    if (pid == 0)
        _exit(CHILD_STATUS);
    if (pid < 0)
        _exit(4);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        _exit(5);
    child_status = status;
}

static void fork_inside_copy(int underscore, size_t stack_size)
{
    atomic_store(&use_underscore, underscore);
    atomic_store(&faults, 0);
    child_status = -1;
    page = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    cap_thread_attr_t *attr = (cap_thread_attr_t *)page;
    CHECK_EQ(cap_thread_attr_getdefault(attr), 0);
    CHECK_EQ(atomic_load(&faults), 1);
    CHECK(WIFEXITED(child_status));
    CHECK_EQ(WEXITSTATUS(child_status), CHILD_STATUS);
    CHECK_EQ(attr->stack_size, stack_size);
    CHECK_EQ(attr->detach_state, CAP_CREATE_JOINABLE);
    CHECK_EQ(munmap(page, page_size), 0);
}

enum { LATER_STACK = 512 * 1024 };

static int child_reads_defaults(void)
{
    cap_thread_attr_t got;
    return cap_thread_attr_getdefault(&got) == 0 && got.stack_size == LATER_STACK ? 0 : 1;
}

/* The lock was let go: the defaults change again, and a fork outside any
 * handler (which takes the lock) completes and its child can read them. */
static void lock_free_after(void)
{
    cap_thread_attr_t attr = CAP_THREAD_ATTR_INITIALIZER;
    attr.stack_size = LATER_STACK;
    CHECK_EQ(cap_thread_attr_setdefault(&attr), 0);
    run_in_fork_child(child_reads_defaults);
}

int main(void)
{
    alarm(ALARM_S);
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_segv;
    act.sa_flags = SA_SIGINFO;
    sigemptyset(&act.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &act, NULL), 0);

    cap_thread_attr_t set = CAP_THREAD_ATTR_INITIALIZER;
    set.stack_size = 128 * 1024;
    CHECK_EQ(cap_thread_attr_setdefault(&set), 0);
    for (int round = 0; round < 3; round++) {
        fork_inside_copy(1, set.stack_size);
        fork_inside_copy(0, set.stack_size);
    }
    lock_free_after();
    return 0;
}

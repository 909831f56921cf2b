/* SPDX-License-Identifier: MIT */
/* Description: a child's SIGCHLD whose handler runs late, after the
 * program reaped that child and began another wait, does not interrupt
 * that wait (no SA_RESTART): Linux interrupts a call only for a signal
 * that comes while it waits, and this one was sent before the child could
 * be reaped. The lateness is made certain with ptrace: a tracer process
 * holds the worker the SIGCHLD went to in its signal-delivery stop (the
 * kernel took the signal, no handler ran yet) while main reaps child C1
 * and begins waitpid(C2); then it lets the signal in. Before, the
 * handler's delivery, numbered as it ran, interrupted main's wait: -1,
 * EINTR, with C2 still running (the tracer lets it end a while after the
 * handler ran: how long only decides whether the old code is caught, not
 * whether the new one passes). Found as a rare failure of
 * io/waitpid_sigchld_returns_child on a loaded machine (a worker slow to
 * run its handler). Two workers: C1 is forked on the one the tracer
 * holds (the kernel sends SIGCHLD to the thread that forked). */
#include <dirent.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "io/io_util.h"

struct shared {
    atomic_int handled; /* SIGCHLD handlers run in the parent (the
                           tracer sets its own back to the default) */
    atomic_int c2;
};
static struct shared *sh;

static atomic_int f_tid, f_go;
static pid_t c1;
static int c1_go[2], c2_go[2], to_main[2], to_tracer[2];

static void on_chld(int sig)
{
    (void)sig;
    atomic_fetch_add(&sh->handled, 1);
}

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* Child C1 and C2: end (status code) once a byte comes. */
static void child_waits_then_exits(int fd, int code)
{
    char c;
    _exit(syscall(SYS_read, fd, &c, 1) == 1 ? code : 99);
}

/* Runs on the worker main does not: forks C1 there. */
static void *forker(void *arg)
{
    (void)arg;
    atomic_store(&f_tid, tid());
    while (!atomic_load(&f_go))
        cap_yield();
    c1 = fork();
    CHECK_GE(c1, 0);
    if (c1 == 0)
        child_waits_then_exits(c1_go[0], 7);
    return NULL;
}

static void say(char c)
{
    syscall(SYS_write, to_main[1], &c, 1);
}

static void nap_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
    syscall(SYS_nanosleep, &t, NULL);
}

/* Whether a thread of process pid blocks in wait4(child, ..., 0, ...):
 * main's wait, on a pool thread, which it registered before. */
static bool waiting_for(pid_t pid, pid_t child)
{
    char want[64], path[64], line[256];
    snprintf(want, sizeof want, "%d 0x%x ", (int)SYS_wait4, (unsigned)child);
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/syscall", (int)pid, e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, line, sizeof line - 1);
        close(fd);
        if (n <= 0)
            continue;
        line[n] = '\0';
        unsigned long status, options;
        if (strncmp(line, want, strlen(want)) == 0 &&
            sscanf(line + strlen(want), "%lx %lx", &status, &options) == 2 && options == 0)
            found = true;
    }
    closedir(d);
    return found;
}

/* The tracer: holds w2 in the stop of the first SIGCHLD it takes (other
 * signals, the runtime's kicks, pass), until main waits for C2; lets C2
 * end a while after the handler ran. Main kills it if the SIGCHLD went
 * to another thread. */
static void tracer(pid_t parent, pid_t w2)
{
    signal(SIGCHLD, SIG_DFL); /* its own, for w2's stops: not counted */
    close(to_tracer[1]); /* it reads to main's close */
    if (ptrace(PTRACE_SEIZE, w2, 0, 0) != 0) {
        say('F');
        _exit(0);
    }
    say('S');
    int st = 0;
    for (;;) {
        if (syscall(SYS_wait4, w2, &st, __WALL, NULL) != w2 || !WIFSTOPPED(st))
            _exit(10);
        if (WSTOPSIG(st) == SIGCHLD)
            break;
        ptrace(PTRACE_CONT, w2, 0, WSTOPSIG(st));
    }
    say('H');
    while (atomic_load(&sh->c2) == 0 || !waiting_for(parent, atomic_load(&sh->c2)))
        nap_ms(1);
    if (ptrace(PTRACE_DETACH, w2, 0, SIGCHLD) != 0) /* its handler runs now */
        _exit(11);
    while (atomic_load(&sh->handled) == 0)
        nap_ms(1);
    nap_ms(200); /* the old code's dispatch interrupts main's wait meanwhile */
    char c = 1;
    if (write(c2_go[1], &c, 1) != 1)
        _exit(12);
    while (syscall(SYS_read, to_tracer[0], &c, 1) > 0)
        ;
    _exit(0);
}

/* The tracer's word, read with raw calls that block this worker: while
 * the other is held no worker may be harvesting I/O readiness, and a
 * parked read would never be woken. 0 if the handler ran first (the
 * SIGCHLD went to another thread). */
static char tracer_says(void)
{
    for (;;) {
        struct pollfd p = { .fd = to_main[0], .events = POLLIN };
        if (syscall(SYS_poll, &p, 1, 1) == 1) {
            char c;
            CHECK_EQ(syscall(SYS_read, to_main[0], &c, 1), 1);
            return c;
        }
        if (atomic_load(&sh->handled) != 0)
            return 0;
    }
}

int main(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    install_handler(SIGCHLD, on_chld, 0);
    CHECK_EQ(pipe(c1_go), 0);
    CHECK_EQ(pipe(c2_go), 0);
    CHECK_EQ(pipe(to_main), 0);
    CHECK_EQ(pipe(to_tracer), 0);

    cap_thread_t f = spawn(forker, NULL);
    while (atomic_load(&f_tid) == 0)
        ; /* no yield: the forker starts on the other worker */
    CHECK(atomic_load(&f_tid) != tid());
    pid_t c2 = fork(); /* before the hold: nothing forks while w2 is stopped */
    CHECK_GE(c2, 0);
    if (c2 == 0)
        child_waits_then_exits(c2_go[0], 9);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama */
    pid_t parent = getpid();
    pid_t t = fork();
    CHECK_GE(t, 0);
    if (t == 0)
        tracer(parent, atomic_load(&f_tid));
    bool held = tracer_says() == 'S';

    atomic_store(&f_go, 1);
    join(f);
    char c = 1;
    CHECK_EQ(write(c1_go[1], &c, 1), 1); /* C1 ends: its SIGCHLD goes to the forker's worker */
    if (held)
        held = tracer_says() == 'H';
    int st;
    CHECK_EQ(waitpid(c1, &st, 0), c1);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    if (!held) { /* no ptrace, or the SIGCHLD went to another thread */
        kill(t, SIGKILL);
        CHECK_EQ(write(c2_go[1], &c, 1), 1);
    }
    atomic_store(&sh->c2, c2);
    CHECK_EQ(waitpid(c2, &st, 0), c2); /* the held SIGCHLD came in meanwhile */
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 9);
    CHECK_GE(atomic_load(&sh->handled), 1);
    close(to_tracer[1]);
    CHECK_EQ(waitpid(t, &st, 0), t);
    if (!held) {
        fprintf(stderr, "could not hold the SIGCHLD (no ptrace, or it went elsewhere): "
                        "skipped\n");
        return 77;
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

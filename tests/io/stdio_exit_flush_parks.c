/* SPDX-License-Identifier: MIT */
/* Description: the streams' output that exit() writes out on a user
 * thread. Each case is a child (this program, started again):
 *  - "inproc": a stream over a full pipe whose reader is a user thread of
 *    the same process, asleep until just after exit() is called. glibc's
 *    exit writes the stream with its blocking write; with one worker
 *    that blocked the reader's worker for good (the child hung); now the
 *    writing waits on the offload pool while the reader runs; the child
 *    exits 0 (its reader checks the bytes, if it gets to before the
 *    process ends).
 *  - "content": stdout over a pipe to this process: text printed by main,
 *    by an atexit handler and by another user thread arrives whole and in
 *    order (the exit's writing comes after the program's handlers).
 *  - "exit-beside-open", "exit-beside-flush": exit() while a stream's
 *    bytes wait for a late in-process reader and another thread opens a
 *    file, or is in fflush(NULL) on that stream: glibc's stream-list lock
 *    held across the wait (by exit's writing, or by fflush(NULL)'s on the
 *    offload pool) blocked the worker of the thread that touched it next;
 *  - "epipe": stdout over a pipe with no reader left: the child is killed
 *    by SIGPIPE, as with glibc's exit (the write is made by a pool thread,
 *    which blocks the signal: the exiting thread gets it), and exits 0
 *    when it ignores SIGPIPE; the same for fflush(NULL)'s writing of a
 *    stream other than stdout (before, the child went on and exited). */
#include <stdbool.h>
#include <sys/wait.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "io/io_util.h"

extern char **environ;

enum { FILL = 65536 };
static const char tail_text[] = "tail of the stream\n";
static int p[2];

static void *inproc_reader(void *arg)
{
    (void)arg;
    usleep(50000); /* past the exit() call */
    static char buf[FILL + sizeof tail_text];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof buf - 1 && (n = read(p[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)n;
    /* the raw fill, then the stream's text */
    CHECK_EQ(got, (size_t)FILL + strlen(tail_text));
    CHECK_EQ(memcmp(buf + FILL, tail_text, strlen(tail_text)), 0);
    for (;;)
        pause(); /* exit() ends the process */
    return NULL;
}

static int child_inproc(int unused)
{
    (void)unused;
    CHECK_EQ(pipe(p), 0);
    cap_thread_t t = spawn(inproc_reader, NULL);
    CHECK_EQ(cap_thread_detach(t), 0);
    FILE *f = fdopen(p[1], "w");
    CHECK(f != NULL);
    static char fill[FILL];
    CHECK_EQ(write(p[1], fill, sizeof fill), (ssize_t)sizeof fill); /* the pipe is full */
    CHECK_GE(fputs(tail_text, f), 0); /* buffered, not written */
    exit(0);
}

/* A reader that starts late and reads for good. */
static void *late_reader(void *arg)
{
    (void)arg;
    usleep(60000);
    static char buf[65536];
    while (read(p[0], buf, sizeof buf) > 0)
        ;
    for (;;)
        pause();
    return NULL;
}

static void *opener(void *arg)
{
    (void)arg;
    usleep(20000); /* while exit's writing waits for the reader */
    FILE *f = fopen("/dev/null", "w");
    CHECK(f != NULL);
    CHECK_EQ(fclose(f), 0);
    for (;;)
        pause();
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
#if defined(__SANITIZE_ADDRESS__)
    /* The process ends while this call is under way: what it allocated
     * is in use, on a stack LeakSanitizer does not scan. */
    __lsan_disable();
#endif
    fflush(NULL); /* waits for the reader */
    return NULL;
}

/* A stream over a pipe whose reader (a user thread) starts late, 256 KiB
 * buffered; meanwhile another thread opens and closes a file (with_opener)
 * or calls fflush(NULL) (not with_opener) while main exits. glibc's list
 * lock held across a wait for the pipe (by exit's writing, or by
 * fflush(NULL)'s) blocked the worker of whoever touched it next. */
static int child_exit_beside(int with_opener)
{
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(cap_thread_detach(spawn(late_reader, NULL)), 0);
    FILE *f = fdopen(p[1], "w");
    CHECK(f != NULL);
    static char vbuf[512 * 1024], big[256 * 1024];
    CHECK_EQ(setvbuf(f, vbuf, _IOFBF, sizeof vbuf), 0);
    memset(big, 'x', sizeof big);
    CHECK_EQ(fwrite(big, 1, sizeof big, f), sizeof big); /* buffered */
    if (with_opener) {
        CHECK_EQ(cap_thread_detach(spawn(opener, NULL)), 0);
    } else {
        CHECK_EQ(cap_thread_detach(spawn(flusher, NULL)), 0);
        usleep(20000); /* its flush waits for the reader */
    }
    exit(0);
}

static void at_exit_text(void)
{
    printf("from atexit;");
}

static void *printing(void *arg)
{
    (void)arg;
    printf("from a thread;");
    return NULL;
}

static int child_content(int unused)
{
    (void)unused;
    CHECK_EQ(atexit(at_exit_text), 0);
    printf("from main;");
    join(spawn(printing, NULL));
    exit(0);
}

static int child_epipe(int ignore)
{
    if (ignore)
        signal(SIGPIPE, SIG_IGN);
    printf("nobody reads this");
    exit(0);
}

/* fflush(NULL) of a stream other than stdout (glibc's flush of all, on
 * the pool) over the pipe with no reader: SIGPIPE here too. */
static int child_flush_all_epipe(int ignore)
{
    if (ignore)
        signal(SIGPIPE, SIG_IGN);
    FILE *f = fdopen(dup(1), "w");
    CHECK(f != NULL);
    CHECK_GE(fputs("nobody reads this", f), 0);
    CHECK_EQ(fflush(NULL), EOF);
    CHECK_EQ(errno, EPIPE);
    _exit(ignore ? 0 : 3); /* not reached without ignore */
}

/* Starts this program with case as argument, its stdout the write end of
 * a new pipe; *rd gets the read end (closed at once if !keep_reader). */
static pid_t start(const char *self, const char *which, int *rd, int keep_reader)
{
    int q[2];
    CHECK_EQ(pipe(q), 0);
    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, q[1], 1), 0);
    CHECK_EQ(posix_spawn_file_actions_addclose(&fa, q[0]), 0);
    char *args[] = { (char *)self, (char *)which, NULL };
    pid_t pid;
    if (!keep_reader)
        CHECK_EQ(close(q[0]), 0);
    CHECK_EQ(posix_spawn(&pid, self, &fa, NULL, args, environ), 0);
    CHECK_EQ(posix_spawn_file_actions_destroy(&fa), 0);
    CHECK_EQ(close(q[1]), 0);
    *rd = keep_reader ? q[0] : -1;
    return pid;
}

/* The child's status; a child still running after 60 s is hung: killed,
 * and the test fails (rather than leave it behind when ctest's timeout
 * ends this process). */
static int wait_status(pid_t pid)
{
    int status = -1;
    for (int i = 0; i < 6000; i++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        CHECK_GE(r, 0);
        if (r == pid)
            return status;
        cap_sleep_ns(10000000);
    }
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(!"the child hung");
    return status;
}

static void read_all(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    ssize_t n;
    while ((n = read(fd, buf + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    CHECK_EQ(n, 0);
    buf[got] = '\0';
    CHECK_EQ(close(fd), 0);
}

/* Runs case `which` of this program in a child, its stdout a pipe read
 * to its end into out (or with no reader at all: !keep_reader); the
 * child's wait status. */
static int run_child(const char *self, const char *which, int keep_reader, char *out,
                     size_t cap)
{
    int rd;
    pid_t pid = start(self, which, &rd, keep_reader);
    if (keep_reader)
        read_all(rd, out, cap);
    return wait_status(pid);
}

static bool exited_0(int st)
{
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool killed_by_sigpipe(int st)
{
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE;
}

static const struct {
    const char *name;
    int (*run)(int);
    int arg;
} cases[] = {
    { "inproc", child_inproc, 0 },
    { "content", child_content, 0 },
    { "epipe", child_epipe, 0 },
    { "epipe-ignored", child_epipe, 1 },
    { "exit-beside-open", child_exit_beside, 1 },
    { "exit-beside-flush", child_exit_beside, 0 },
    { "flush-all-epipe", child_flush_all_epipe, 0 },
    { "flush-all-epipe-ignored", child_flush_all_epipe, 1 },
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            return cases[i].run(cases[i].arg);

    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK_GT(n, 0);
    self[n] = '\0';
    char out[256];
    for (int round = 0; round < 3; round++) {
        CHECK(exited_0(run_child(self, "inproc", 1, out, sizeof out)));
        CHECK_EQ(strcmp(out, ""), 0); /* the child's stdout: nothing */
        CHECK(exited_0(run_child(self, "content", 1, out, sizeof out)));
        CHECK_EQ(strcmp(out, "from main;from a thread;from atexit;"), 0);
        CHECK(killed_by_sigpipe(run_child(self, "epipe", 0, out, sizeof out)));
        CHECK(exited_0(run_child(self, "epipe-ignored", 0, out, sizeof out)));
        CHECK(exited_0(run_child(self, "exit-beside-open", 1, out, sizeof out)));
        CHECK(exited_0(run_child(self, "exit-beside-flush", 1, out, sizeof out)));
        CHECK(killed_by_sigpipe(run_child(self, "flush-all-epipe", 0, out, sizeof out)));
        CHECK(exited_0(run_child(self, "flush-all-epipe-ignored", 0, out, sizeof out)));
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: syslog() to a log daemon that has fallen behind (its
 * /dev/log queue full) parks only the caller: other threads of the
 * worker run on (on CAP_WORKERS=1 too; before, glibc's internal send held
 * the worker until the queue drained, and this test hung). Eight threads
 * log through syslog, vsyslog, __syslog_chk and __vsyslog_chk until they
 * are all stuck; a fork's child meanwhile takes the syslog lock one of
 * them holds (the child starts with it free); then every message arrives,
 * each thread's in order. A thread cancelled while parked in syslog lets
 * the lock go: the next syslog is sent. In a mount namespace of its own
 * (mount_ns.h), whose /dev/log is a socket nobody reads until the end. */
#include <stdarg.h>
#include <sys/un.h>
#include <syslog.h>

#include "mount_ns.h"
#include "io/io_util.h"

/* glibc's _FORTIFY_SOURCE names, which the library defines too. */
extern void __syslog_chk(int pri, int flag, const char *fmt, ...);
extern void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap);

enum { LOGGERS = 8 };

static int per_logger;
static atomic_int sent[LOGGERS + 1]; /* [LOGGERS]: the thread that gets cancelled */

static void log_v(int use_chk, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (use_chk)
        __vsyslog_chk(LOG_INFO, 1, fmt, ap);
    else
        vsyslog(LOG_INFO, fmt, ap);
    va_end(ap);
}

static void log_one(int id, int seq)
{
    switch (id % 4) {
    case 0:
        syslog(LOG_INFO, "L%d #%d", id, seq);
        break;
    case 1:
        log_v(0, "L%d #%d", id, seq);
        break;
    case 2:
        __syslog_chk(LOG_INFO, 1, "L%d #%d", id, seq);
        break;
    default:
        log_v(1, "L%d #%d", id, seq);
        break;
    }
}

static void *logger(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int seq = 0; seq < per_logger; seq++) {
        log_one(id, seq);
        atomic_fetch_add(&sent[id], 1);
    }
    return NULL;
}

static int total_sent(int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += atomic_load(&sent[i]);
    return n;
}

/* Waits until the loggers in [from, to) stop sending short of `want`
 * messages while the ticker runs: they are parked in syslog. */
static void wait_until_stuck(int from, int to, int want)
{
    for (int tries = 0; tries < 1000; tries++) {
        int before = total_sent(from, to);
        long ticks = ticker_ticks();
        cap_sleep_ns(10000000);
        int now = total_sent(from, to);
        CHECK_LT(now, want); /* the queue cannot hold them all */
        if (now == before && ticker_ticks() > ticks)
            return;
    }
    CHECK(!"the loggers never stopped");
}

/* The next message on log: its thread and number. */
static void next_message(int log, int *id, int *seq)
{
    struct pollfd p = { .fd = log, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 10000), 1);
    char buf[512];
    ssize_t n = recv(log, buf, sizeof buf - 1, 0);
    CHECK_GT(n, 0);
    buf[n] = '\0';
    CHECK(strncmp(buf, "<14>", 4) == 0);
    const char *body = strstr(buf, ": L");
    CHECK(body != NULL);
    CHECK_EQ(sscanf(body, ": L%d #%d", id, seq), 2);
}

static void *stuck_logger(void *arg)
{
    (void)arg;
    for (int seq = 0;; seq++) {
        syslog(LOG_INFO, "L%d #%d", LOGGERS, seq);
        atomic_fetch_add(&sent[LOGGERS], 1);
    }
    return NULL;
}

static void fork_child_takes_lock(void)
{
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        closelog(); /* takes the lock a parked logger holds in the parent */
        _exit(0);
    }
    int status = 0;
    pid_t got = 0;
    for (int tries = 0; tries < 1000 && got == 0; tries++) {
        got = waitpid(child, &status, WNOHANG);
        if (got == 0)
            cap_sleep_ns(10000000);
    }
    if (got == 0)
        kill(child, SIGKILL);
    CHECK_EQ(got, child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    mount_ns_enter(argv, (const char *const[]){ "/dev", NULL });
    int log = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CHECK(log >= 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
    CHECK_EQ(bind(log, (struct sockaddr *)&a, sizeof a), 0);

    /* Far more than the queue holds: its length (max_dgram_qlen) bounds
     * the messages waiting, and the sender's buffer their bytes. */
    int qlen = 512;
    FILE *f = fopen("/proc/sys/net/unix/max_dgram_qlen", "r");
    if (f != NULL) {
        CHECK_EQ(fscanf(f, "%d", &qlen), 1);
        fclose(f);
    }
    per_logger = (2 * qlen + 256) / LOGGERS + 1;
    int want = per_logger * LOGGERS;

    ticker_start(1000000);
    cap_thread_t t[LOGGERS];
    for (int i = 0; i < LOGGERS; i++)
        t[i] = spawn(logger, (void *)(intptr_t)i);
    wait_until_stuck(0, LOGGERS, want);
    fork_child_takes_lock();

    int next[LOGGERS] = { 0 };
    for (int k = 0; k < want; k++) {
        int id, seq;
        next_message(log, &id, &seq);
        CHECK(id >= 0 && id < LOGGERS);
        CHECK_EQ(seq, next[id]);
        next[id]++;
    }
    for (int i = 0; i < LOGGERS; i++) {
        join(t[i]);
        CHECK_EQ(atomic_load(&sent[i]), per_logger);
    }

    /* Cancelled while parked in syslog: nothing half sent, lock let go. */
    cap_thread_t stuck = spawn(stuck_logger, NULL);
    wait_until_stuck(LOGGERS, LOGGERS + 1, INT32_MAX);
    CHECK_EQ(cap_thread_cancel(stuck), 0);
    CHECK(join(stuck) == CAP_CANCELED);
    int stuck_sent = atomic_load(&sent[LOGGERS]);
    for (int k = 0; k < stuck_sent; k++) {
        int id, seq;
        next_message(log, &id, &seq);
        CHECK_EQ(id, LOGGERS);
        CHECK_EQ(seq, k);
    }
    syslog(LOG_INFO, "L%d #%d", LOGGERS + 1, 0);
    int id, seq;
    next_message(log, &id, &seq);
    CHECK_EQ(id, LOGGERS + 1);

    ticker_stop();
    close(log);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: what syslog() sends to /dev/log, byte for byte, and the
 * rest of the family as glibc 2.36 has them: the header "<PRI>Mmm dd
 * hh:mm:ss tag[pid]: " (the program's short name without openlog, the pid
 * with LOG_PID), %m and the caller's errno, the default facility and
 * openlog's (0 is LOG_KERN), a signal handler's message, setlogmask's old
 * masks and dropped levels, a 3000-byte message and a 1500-byte tag whole,
 * LOG_PERROR's line on stderr, glibc's report of bad priority bits,
 * closelog (it forgets the tag, not the options or the facility), a stream
 * socket at /dev/log (a record ends with a NUL, but for glibc's
 * exception), LOG_CONS's line on /dev/console when /dev/log is gone, and
 * the way back to a datagram socket. In a mount namespace of its own
 * (mount_ns.h). The library makes these calls itself since glibc's send
 * held the worker while the log daemon's queue was full. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../../mount_ns.h"
#include "check.h"

static int bind_log(int type)
{
    unlink("/dev/log");
    int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    EXPECT(s >= 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
    EXPECT_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    if (type == SOCK_STREAM)
        EXPECT_EQ(listen(s, 8), 0);
    return s;
}

/* The next record on s (a datagram, or a stream's bytes up to its NUL),
 * NUL-terminated in buf; its length, the stream's NUL counted. */
static size_t next_record(int s, char *buf, size_t room, int type)
{
    size_t got = 0;
    do {
        struct pollfd p = { .fd = s, .events = POLLIN };
        EXPECT_EQ(poll(&p, 1, 10000), 1);
        ssize_t n = recv(s, buf + got, type == SOCK_STREAM ? 1 : room - 1, 0);
        EXPECT(n > 0);
        got += (size_t)n;
        EXPECT(got < room);
    } while (type == SOCK_STREAM && buf[got - 1] != '\0');
    buf[got] = '\0';
    return got;
}

/* rec is "<pri>" + the local time of a second in [before, after] as
 * "Mmm dd hh:mm:ss " + rest, and nothing more. */
static void expect(const char *rec, size_t len, int pri, const char *rest, time_t before,
                   time_t after)
{
    char head[16];
    int h = snprintf(head, sizeof head, "<%d>", pri);
    if (strncmp(rec, head, h) != 0) {
        fprintf(stderr, "record \"%s\": want priority %s\n", rec, head);
        EXPECT(0);
    }
    int stamp_ok = 0;
    for (time_t t = before; t <= after && !stamp_ok; t++) {
        struct tm tm;
        char stamp[32];
        EXPECT(localtime_r(&t, &tm) != NULL);
        size_t sl = strftime(stamp, sizeof stamp, "%h %e %T ", &tm);
        stamp_ok = sl == 16 && strncmp(rec + h, stamp, sl) == 0;
    }
    if (!stamp_ok || strcmp(rec + h + 16, rest) != 0) {
        fprintf(stderr, "record \"%s\": want the time then \"%s\"\n", rec, rest);
        EXPECT(0);
    }
    EXPECT_EQ(len, strlen(rec));
}

static char rec[8192];

static void log_from_handler(int sig)
{
    (void)sig;
    syslog(LOG_INFO, "from a handler");
}

#define LOGGED(sock, pri, rest, call)                                                    \
    do {                                                                                 \
        time_t before_ = time(NULL);                                                     \
        call;                                                                            \
        time_t after_ = time(NULL);                                                      \
        size_t n_ = next_record(sock, rec, sizeof rec, SOCK_DGRAM);                      \
        expect(rec, n_, pri, rest, before_, after_);                                     \
    } while (0)

/* Everything written to fd so far (a non-blocking pipe). */
static const char *drain(int fd)
{
    static char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    (void)argc;
    mount_ns_enter(argv, (const char *const[]){ "/dev", NULL });
    const char *name = program_invocation_short_name;
    char want[4096];
    int pid = (int)getpid();
    int log = bind_log(SOCK_DGRAM);

    /* No openlog: the program's name, LOG_USER; errno kept, %m. */
    snprintf(want, sizeof want, "%s: plain one", name);
    LOGGED(log, LOG_USER | LOG_INFO, want, syslog(LOG_INFO, "plain %s", "one"));
    errno = ENOENT;
    snprintf(want, sizeof want, "%s: open: %s", name, strerror(ENOENT));
    LOGGED(log, LOG_USER | LOG_ERR, want, syslog(LOG_ERR, "open: %m"));
    EXPECT_EQ(errno, ENOENT);

    /* openlog's tag, pid and facility; a facility in the call wins. */
    openlog("captest", LOG_PID | LOG_NDELAY, LOG_LOCAL3);
    snprintf(want, sizeof want, "captest[%d]: warn 42", pid);
    LOGGED(log, LOG_LOCAL3 | LOG_WARNING, want, syslog(LOG_WARNING, "warn %d", 42));
    snprintf(want, sizeof want, "captest[%d]: daemon's", pid);
    LOGGED(log, LOG_DAEMON | LOG_NOTICE, want, syslog(LOG_DAEMON | LOG_NOTICE, "daemon's"));

    /* From a signal handler (not async-signal-safe, but common): the
     * same tag, pid and facility. */
    install_handler(SIGUSR1, log_from_handler, 0);
    snprintf(want, sizeof want, "captest[%d]: from a handler", pid);
    LOGGED(log, LOG_LOCAL3 | LOG_INFO, want, raise(SIGUSR1));

    /* The mask: the old one back, a dropped level sends nothing. */
    EXPECT_EQ(setlogmask(LOG_UPTO(LOG_NOTICE)), 0xff);
    EXPECT_EQ(setlogmask(0), LOG_UPTO(LOG_NOTICE));
    syslog(LOG_DEBUG, "dropped");
    snprintf(want, sizeof want, "captest[%d]: kept", pid);
    LOGGED(log, LOG_LOCAL3 | LOG_NOTICE, want, syslog(LOG_NOTICE, "kept"));
    EXPECT_EQ(setlogmask(0xff), LOG_UPTO(LOG_NOTICE));

    /* Long, and with its own newline: sent as they are. */
    static char big[3001];
    memset(big, 'x', 3000);
    snprintf(want, sizeof want, "captest[%d]: %s", pid, big);
    LOGGED(log, LOG_LOCAL3 | LOG_INFO, want, syslog(LOG_INFO, "%s", big));
    snprintf(want, sizeof want, "captest[%d]: line\n", pid);
    LOGGED(log, LOG_LOCAL3 | LOG_INFO, want, syslog(LOG_INFO, "line\n"));

    /* A tag longer than glibc's stack buffer: whole too. */
    static char long_tag[1501];
    memset(long_tag, 't', 1500);
    openlog(long_tag, LOG_PID, LOG_LOCAL3);
    snprintf(want, sizeof want, "%s[%d]: short 7", long_tag, pid);
    LOGGED(log, LOG_LOCAL3 | LOG_INFO, want, syslog(LOG_INFO, "short %d", 7));
    openlog("captest", LOG_PID, LOG_LOCAL3);

    /* Bad priority bits: glibc's report (LOG_ERR with option bits, which
     * read as facility LOG_AUTH), then the message without them. */
    time_t before = time(NULL);
    syslog(0x10000 | LOG_INFO, "bad");
    time_t after = time(NULL);
    snprintf(want, sizeof want, "captest[%d]: syslog: unknown facility/priority: %x", pid,
             0x10000 | LOG_INFO);
    size_t n = next_record(log, rec, sizeof rec, SOCK_DGRAM);
    expect(rec, n, LOG_AUTH | LOG_ERR, want, before, after);
    snprintf(want, sizeof want, "captest[%d]: bad", pid);
    n = next_record(log, rec, sizeof rec, SOCK_DGRAM);
    expect(rec, n, LOG_LOCAL3 | LOG_INFO, want, before, after);

    /* LOG_PERROR: the line from the tag on, with a newline, on stderr;
     * facility 0 is LOG_KERN. */
    int err_pipe[2];
    EXPECT_EQ(pipe(err_pipe), 0);
    EXPECT_EQ(fcntl(err_pipe[0], F_SETFL, O_NONBLOCK), 0);
    int saved_stderr = dup(STDERR_FILENO);
    EXPECT_EQ(dup2(err_pipe[1], STDERR_FILENO), STDERR_FILENO);
    openlog("perr", LOG_PERROR, 0);
    LOGGED(log, LOG_KERN | LOG_INFO, "perr: to stderr", syslog(LOG_INFO, "to stderr"));
    EXPECT(strcmp(drain(err_pipe[0]), "perr: to stderr\n") == 0);
    LOGGED(log, LOG_KERN | LOG_INFO, "perr: ends\n", syslog(LOG_INFO, "ends\n"));
    EXPECT(strcmp(drain(err_pipe[0]), "perr: ends\n") == 0);

    /* closelog forgets the tag only. */
    closelog();
    snprintf(want, sizeof want, "%s: after close", name);
    LOGGED(log, LOG_KERN | LOG_INFO, want, syslog(LOG_INFO, "after close"));
    snprintf(want, sizeof want, "%s: after close\n", name);
    EXPECT(strcmp(drain(err_pipe[0]), want) == 0);
    EXPECT_EQ(dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
    close(saved_stderr);
    close(err_pipe[0]);
    close(err_pipe[1]);

    /* A stream socket at /dev/log: a record ends with a NUL, but for the
     * first after the switch from the datagram socket, whose size glibc
     * counted before it reconnected. */
    close(log);
    int listener = bind_log(SOCK_STREAM);
    openlog("stream", 0, LOG_USER);
    before = time(NULL);
    syslog(LOG_INFO, "streamed");
    syslog(LOG_INFO, "second");
    after = time(NULL);
    int conn = accept(listener, NULL, NULL);
    EXPECT(conn >= 0);
    n = next_record(conn, rec, sizeof rec, SOCK_STREAM);
    EXPECT_EQ(n, strlen(rec) + 1);
    char *second = strstr(rec + 1, "<14>");
    EXPECT(second != NULL);
    expect(second, strlen(second), LOG_USER | LOG_INFO, "stream: second", before, after);
    *second = '\0';
    expect(rec, strlen(rec), LOG_USER | LOG_INFO, "stream: streamed", before, after);

    /* No /dev/log: LOG_CONS writes the line to /dev/console, \r\n ended. */
    close(conn);
    close(listener);
    unlink("/dev/log");
    EXPECT_EQ(mkfifo("/dev/console", 0600), 0);
    int console = open("/dev/console", O_RDONLY | O_NONBLOCK);
    EXPECT(console >= 0);
    openlog("cons", LOG_CONS, LOG_USER);
    syslog(LOG_ERR, "to console");
    EXPECT(strcmp(drain(console), "cons: to console\r\n") == 0);
    syslog(LOG_ERR, "again");
    EXPECT(strcmp(drain(console), "cons: again\r\n") == 0);
    close(console);

    /* A datagram socket again: found after the stream type is refused. */
    log = bind_log(SOCK_DGRAM);
    LOGGED(log, LOG_USER | LOG_INFO, "cons: datagrams again", syslog(LOG_INFO, "datagrams again"));
    closelog();
    close(log);
    return 0;
}

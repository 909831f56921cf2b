/* SPDX-License-Identifier: MIT */
/*
 * The syslog family (openlog, syslog, vsyslog and their _FORTIFY_SOURCE
 * names, setlogmask, closelog), made here instead of by glibc, whose
 * syslog sends to /dev/log with its internal send: a log daemon that fell
 * behind (a full datagram queue) held the caller's worker, and every user
 * thread on it, until the daemon caught up. These send with the library's
 * send, called by name on purpose as a program would call it: it parks
 * only the caller. A thread the library does not run waits in the kernel,
 * as before.
 *
 * What reaches the log is what glibc 2.36 sends, byte for byte
 * (tests/compat/programs/syslog_as_glibc.c holds both to it): "<PRI>",
 * the local time as "Mmm dd hh:mm:ss " in the C locale, the tag
 * (openlog's ident, else the program's short name), "[pid]" with
 * LOG_PID, ": " and the message (%m is the caller's errno); the header
 * "<PRI>: " alone when the time cannot be had; one more byte, the NUL,
 * on a stream socket (see deliver for glibc's exception). The connection is glibc's too: a datagram socket,
 * a stream one when the address refuses that type (EPROTOTYPE), one
 * reconnection when a send fails, then the console with LOG_CONS. A
 * priority with bits beyond the facility and level is first reported
 * with glibc's own message and then sent without them. Unlike glibc's,
 * these keep the caller's errno.
 *
 * State [lock]: the connection and openlog's settings; the mask is atomic
 * so that a message the mask drops takes no lock. lock is a glibc mutex
 * taken through the library's pthread_mutex_lock (libc_mutex.c): a user
 * thread parks on it, another thread sleeps in glibc. Its holder may
 * park in send, so a cancel there (send is a cancellation point) lets it
 * go through a cleanup frame, and a fork's child starts with it free (the
 * holder is not in the child: cap__syslog_forked).
 *
 * Inside a signal handler glibc's syslog runs, as every wrapper forwards
 * there (intercept.h): a handler must not wait for a lock whose holder
 * is parked on its own worker. So openlog, setlogmask and closelog pass
 * their settings to glibc too, and a handler's message is tagged the
 * same; but glibc opens its own socket when it first needs it (LOG_NDELAY
 * is not passed on: it would cost a descriptor that is seldom used), so a
 * handler's message after a chroot that hides /dev/log is lost. openlog
 * and closelog inside a handler change glibc's settings only.
 */
#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <capriccio/cancel.h>

#include "intercept/intercept.h"

/* glibc's, declared by its headers only under _FORTIFY_SOURCE. */
extern int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt,
                           va_list ap);
extern void __syslog_chk(int pri, int flag, const char *fmt, ...);
extern void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap);

/* glibc's priority for its report of bad priority bits: a level with
 * option bits, so that it reads as LOG_ERR of facility LOG_AUTH. */
#define BAD_PRIORITY_REPORT (LOG_ERR | LOG_CONS | LOG_PERROR | LOG_PID)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;           /* [lock] */
static int log_type = SOCK_DGRAM; /* [lock] */
static bool connected;            /* [lock] */
static int log_options;           /* [lock] openlog's LOG_PID, LOG_CONS, ... */
static const char *log_tag;       /* [lock] openlog's ident; NULL: the program's name */
static int log_facility = LOG_USER; /* [lock] */
static atomic_int log_mask = 0xff;

static const struct sockaddr_un log_addr = { .sun_family = AF_UNIX, .sun_path = _PATH_LOG };

/* ---- the message ----------------------------------------------------------- */

enum { STACK_TEXT = 1024 };

struct message {
    char *text;   /* the datagram, NUL-terminated: stack or heap */
    size_t len;   /* without the NUL */
    size_t body;  /* where the tag starts: what stderr and the console get */
    char stack[STACK_TEXT];
};

/* "Mmm dd hh:mm:ss " in the C locale (strftime's "%h %e %T "), or false
 * when the time has no broken-down form. */
static bool timestamp(char *out, size_t size)
{
    static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) == NULL)
        return false;
    snprintf(out, size, "%s %2d %02d:%02d:%02d ", months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec);
    return true;
}

/* The header into out (size bytes, as snprintf): its whole length; *body
 * is where the tag starts. ts: the time, or NULL. [lock] */
static size_t header(char *out, size_t size, int pri, const char *ts, size_t *body)
{
    if (ts == NULL) {
        int n = snprintf(out, size, "<%d>: ", pri);
        *body = (size_t)n;
        return (size_t)n;
    }
    *body = (size_t)snprintf(NULL, 0, "<%d>", pri) + strlen(ts);
    const char *tag = log_tag != NULL ? log_tag : program_invocation_short_name;
    if (log_options & LOG_PID)
        return (size_t)snprintf(out, size, "<%d>%s%s[%d]: ", pri, ts, tag, (int)getpid());
    return (size_t)snprintf(out, size, "<%d>%s%s: ", pri, ts, tag);
}

/* The user's part into out (size bytes, as vsnprintf): its whole length.
 * The _chk names' flag > 0 refuses %n in writable memory, as glibc's
 * does. A format vsnprintf refuses (EOVERFLOW, EILSEQ) gives an empty
 * part: the header alone is sent. %m is errno_at_call. */
static size_t body_into(char *out, size_t size, int chk_flag, int errno_at_call, const char *fmt,
                        va_list ap)
{
    va_list apc;
    va_copy(apc, ap);
    cap__ic_set_errno(errno_at_call); /* after the lock's park: asks for its address again */
    int n = chk_flag > 0 ? __vsnprintf_chk(out, size, chk_flag, size, fmt, apc)
                         : vsnprintf(out, size, fmt, apc);
    va_end(apc);
    if (n >= 0)
        return (size_t)n;
    if (size > 0)
        out[0] = '\0';
    return 0;
}

/* Builds m. [lock] for the tag and options. A message too long for the
 * stack buffer goes to the heap; without memory, glibc's "out of
 * memory[pid]" is sent instead. */
static void compose(struct message *m, int pri, int chk_flag, int errno_at_call, const char *fmt,
                    va_list ap)
{
    char ts_buf[sizeof "Mmm dd hh:mm:ss "];
    const char *ts = timestamp(ts_buf, sizeof ts_buf) ? ts_buf : NULL;
    m->text = m->stack;
    size_t head = header(m->stack, sizeof m->stack, pri, ts, &m->body);
    size_t room = head < sizeof m->stack ? sizeof m->stack - head : 0;
    size_t n = body_into(room > 0 ? m->stack + head : NULL, room, chk_flag, errno_at_call, fmt, ap);
    m->len = head + n;
    if (m->len < sizeof m->stack)
        return;

    char *big = malloc(m->len + 1);
    if (big == NULL) {
        m->len = (size_t)snprintf(m->stack, sizeof m->stack, "out of memory[%d]", (int)getpid());
        m->body = 0;
        return;
    }
    header(big, head + 1, pri, ts, &m->body);
    m->len = head + body_into(big + head, n + 1, chk_flag, errno_at_call, fmt, ap);
    m->text = big;
}

static void message_free(void *arg)
{
    struct message *m = arg;
    if (m->text != m->stack)
        free(m->text);
}

/* ---- the connection [lock] ------------------------------------------------- */

static void disconnect(void)
{
    if (!connected)
        return;
    close(log_fd);
    log_fd = -1;
    connected = false;
}

/* Connects, opening the socket first if there is none and open_now (a
 * message to send, or openlog's LOG_NDELAY): a datagram socket, or a
 * stream one if the address is of that type. */
static void connect_log(bool open_now)
{
    for (int tries = 0; tries < 2; tries++) {
        if (log_fd == -1) {
            if (!open_now)
                return;
            log_fd = socket(AF_UNIX, log_type | SOCK_CLOEXEC, 0);
            if (log_fd == -1)
                return;
        }
        if (connected)
            return;
        if (connect(log_fd, (const struct sockaddr *)&log_addr, sizeof log_addr) == 0) {
            connected = true;
            return;
        }
        int e = cap__ic_errno(); /* connect may have parked */
        close(log_fd);
        log_fd = -1;
        if (e != EPROTOTYPE)
            return;
        log_type = log_type == SOCK_DGRAM ? SOCK_STREAM : SOCK_DGRAM;
    }
}

static bool send_log(const struct message *m, size_t n)
{
    return connected && send(log_fd, m->text, n, MSG_NOSIGNAL) >= 0;
}

static void write_line(int fd, const struct message *m, const char *end)
{
    struct iovec v[2] = { { m->text + m->body, m->len - m->body },
                          { (void *)end, strlen(end) } };
    (void)writev(fd, v, 2);
}

static void close_console(void *fd)
{
    close(*(int *)fd);
}

/* [lock] */
static void deliver(const struct message *m)
{
    if (log_options & LOG_PERROR)
        write_line(STDERR_FILENO, m, m->len > 0 && m->text[m->len - 1] == '\n' ? "" : "\n");
    if (!connected)
        connect_log(true);
    /* A stream's records end with the NUL, counted as glibc counts it: by
     * the socket's type before the reconnection below, so the first
     * message after a switch from datagrams to a stream goes without. */
    size_t n = m->len + (log_type == SOCK_STREAM);
    if (send_log(m, n))
        return;
    if (connected) { /* the daemon may have gone: once more, on a new socket */
        disconnect();
        connect_log(true);
        if (send_log(m, n))
            return;
    }
    disconnect(); /* the next message tries again */
    if (!(log_options & LOG_CONS))
        return;
    int fd = open(_PATH_CONSOLE, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    cap_cleanup_frame_t frame; /* writev is a cancellation point */
    cap_cleanup_frame_push(&frame, close_console, &fd);
    write_line(fd, m, "\r\n");
    cap_cleanup_frame_pop(&frame, 1);
}

/* ---- the calls ------------------------------------------------------------- */

static void unlock(void *arg)
{
    (void)arg;
    pthread_mutex_unlock(&lock);
}

static void log_message(int pri, int chk_flag, const char *fmt, va_list ap);

/* The report's one argument, the bad priority, as a va_list. */
static void report_bad_priority(int unused, ...)
{
    va_list ap;
    va_start(ap, unused);
    log_message(BAD_PRIORITY_REPORT, 0, "syslog: unknown facility/priority: %x", ap);
    va_end(ap);
}

static void log_message(int pri, int chk_flag, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    if (pri & ~(LOG_PRIMASK | LOG_FACMASK)) {
        report_bad_priority(0, pri);
        pri &= LOG_PRIMASK | LOG_FACMASK;
    }
    if (!(LOG_MASK(LOG_PRI(pri)) & atomic_load_explicit(&log_mask, memory_order_relaxed))) {
        cap__ic_set_errno(saved_errno); /* the report may have parked */
        return;
    }

    struct message m;
    cap_cleanup_frame_t unlock_frame, free_frame;
    pthread_mutex_lock(&lock);
    cap_cleanup_frame_push(&unlock_frame, unlock, NULL);
    if ((pri & LOG_FACMASK) == 0)
        pri |= log_facility;
    compose(&m, pri, chk_flag, saved_errno, fmt, ap);
    cap_cleanup_frame_push(&free_frame, message_free, &m);
    deliver(&m);
    cap_cleanup_frame_pop(&free_frame, 1);
    cap_cleanup_frame_pop(&unlock_frame, 1);
    cap__ic_set_errno(saved_errno); /* after a park: asks for errno's address again */
}

void vsyslog(int pri, const char *fmt, va_list ap)
{
    if (cap__in_signal_handler()) {
        CAP__REAL(vsyslog)(pri, fmt, ap);
        return;
    }
    log_message(pri, 0, fmt, ap);
}

void syslog(int pri, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsyslog(pri, fmt, ap);
    va_end(ap);
}

void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
    if (cap__in_signal_handler()) {
        CAP__REAL(__vsyslog_chk)(pri, flag, fmt, ap);
        return;
    }
    log_message(pri, flag, fmt, ap);
}

void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    __vsyslog_chk(pri, flag, fmt, ap);
    va_end(ap);
}

void openlog(const char *ident, int options, int facility)
{
    if (!cap__in_signal_handler()) {
        cap_cleanup_frame_t frame;
        pthread_mutex_lock(&lock);
        cap_cleanup_frame_push(&frame, unlock, NULL);
        if (ident != NULL)
            log_tag = ident;
        log_options = options;
        if ((facility & ~LOG_FACMASK) == 0)
            log_facility = facility;
        connect_log(options & LOG_NDELAY);
        cap_cleanup_frame_pop(&frame, 1);
    }
    CAP__REAL(openlog)(ident, options & ~LOG_NDELAY, facility);
}

void closelog(void)
{
    if (!cap__in_signal_handler()) {
        cap_cleanup_frame_t frame;
        pthread_mutex_lock(&lock);
        cap_cleanup_frame_push(&frame, unlock, NULL);
        disconnect();
        log_tag = NULL;
        log_type = SOCK_DGRAM;
        cap_cleanup_frame_pop(&frame, 1);
    }
    CAP__REAL(closelog)();
}

int setlogmask(int mask)
{
    CAP__REAL(setlogmask)(mask);
    if (mask == 0)
        return atomic_load(&log_mask);
    return atomic_exchange(&log_mask, mask);
}

/* intercept.h */
void cap__syslog_forked(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&lock, &fresh, sizeof lock);
}

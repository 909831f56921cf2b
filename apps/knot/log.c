/* SPDX-License-Identifier: MIT */
/*
 * The access log: Common Log Format lines gathered in one 64 KiB buffer and
 * written to the file when the buffer fills, by the signal watcher about
 * once a second, and at shutdown. So a request costs a formatted append,
 * not a write. Trade-off: the write happens under the lock, so the rare
 * request that fills the buffer and those queued behind it wait for one
 * disk append; a second buffer would hide that at the cost of more code.
 * Request targets come from clients: quotes, backslashes and any byte
 * outside printable ASCII are written as \xHH so a line cannot be forged.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "httpdate.h"

#define LOG_BUF (64 * 1024)
#define LINE_MAX_BYTES 2048 /* longer targets are cut */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static char buf[LOG_BUF];
static size_t used;

int log_open(const char *path)
{
    if (!path)
        return 0;
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return fd < 0 ? -errno : 0;
}

/* Caller holds lock. A failed write drops the buffer: losing log lines is
 * better than stalling every request behind a full disk. */
static void flush_locked(void)
{
    size_t off = 0;
    while (off < used) {
        ssize_t n = write(fd, buf + off, used - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    used = 0;
}

static size_t escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 4 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
    return n;
}

/* The line's buffers make a frame of 4 KiB, whose far end the compiler
 * writes on entry: kept out of log_request so that with logging off a
 * request does not touch another page of its thread's stack (a TLB miss
 * each time, with 1,000 threads; ~0.9% of Knot's CPU time by perf). */
static __attribute__((noinline)) void append_line(const char *peer, const char *method,
                                                  const char *target, int minor, int status,
                                                  long long bytes)
{
    char line[LINE_MAX_BYTES], when[CLFDATE_LEN + 1], m[40], t[LINE_MAX_BYTES - 200];
    httpdate_format_clf(time(NULL), when);
    escape(m, sizeof m, method ? method : "-");
    escape(t, sizeof t, target ? target : "-");
    int n = snprintf(line, sizeof line, "%s - - [%s] \"%s %s HTTP/1.%d\" %d %lld\n", peer, when,
                     m, t, minor, status, bytes);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) {
        n = sizeof line - 1;
        line[n - 1] = '\n';
    }
    pthread_mutex_lock(&lock);
    if (used + (size_t)n > sizeof buf)
        flush_locked();
    memcpy(buf + used, line, (size_t)n);
    used += (size_t)n;
    pthread_mutex_unlock(&lock);
}

void log_request(const char *peer, const char *method, const char *target, int minor,
                 int status, long long bytes)
{
    if (fd >= 0)
        append_line(peer, method, target, minor, status, bytes);
}

void log_flush(void)
{
    if (fd < 0)
        return;
    pthread_mutex_lock(&lock);
    flush_locked();
    pthread_mutex_unlock(&lock);
}

void log_close(void)
{
    if (fd < 0)
        return;
    log_flush();
    close(fd);
    fd = -1;
}
